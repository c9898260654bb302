#include "linked_stream.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "clock.h"

namespace locklab {
namespace {

// How long, in real time, a request written on its arrival may take to be
// answered: the clock stands still until it is (the server runs it at the
// instant it arrived), as it does for a request a client waits on.
constexpr int kLingeringAnswerMs = 10'000;

// Bytes waiting to be read on `fd`.
int readable_bytes(int fd) {
  int bytes = 0;
  return ::ioctl(fd, FIONREAD, &bytes) == 0 ? bytes : 0;
}

// Writes all of `bytes` to the non-blocking socket `fd`; false when the
// socket failed (the connection's read then tells it).
bool write_all(int fd, const std::string& bytes) {
  for (size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, kLingeringAnswerMs) > 0) continue;
    }
    return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<LinkedStream> LinkedStream::open(SimulatedLink& link, int fd) {
  auto stream = std::make_shared<LinkedStream>(Key{}, link, fd);
  stream->listener_ = link.on_change([weak = std::weak_ptr(stream)] {
    if (auto self = weak.lock()) self->pump();
  });
  return stream;
}

LinkedStream::LinkedStream(Key, SimulatedLink& link, int fd)
    : link_(link), fd_(::fcntl(fd, F_DUPFD_CLOEXEC, 0)), closes_seen_(link.closes()) {
  if (fd_ < 0)
    throw std::runtime_error(std::string("cannot duplicate a socket: ") + std::strerror(errno));
}

LinkedStream::~LinkedStream() {
  link_.remove_listener(listener_);
  if (timer_) cancel_virtual_timer(timer_->first, timer_->second);
  if (fd_ >= 0) ::close(fd_);
}

void LinkedStream::on_written(std::function<void()> told) {
  told_ = std::move(told);
}

void LinkedStream::close() {
  told_ = nullptr;
  connection_closed_ = true;
  std::erase_if(flights_, [](const Flight& f) { return f.state != State::OnItsWay; });
  unread_ = 0;
  if (!flights_.empty()) link_.linger(shared_from_this());
}

bool LinkedStream::broken() const {
  return link_.closes() != closes_seen_ || (lost_at_heals_ && link_.heals() != *lost_at_heals_);
}

void LinkedStream::lose(Flight& flight) {
  flight.state = State::Lost;
  flight.bytes.clear();
  if (!lost_at_heals_) lost_at_heals_ = link_.heals();
}

void LinkedStream::send(std::string bytes) {
  Flight flight;
  flight.sent_ns = monotonic_ns();
  if (lost_at_heals_ || broken() || link_.drops_requests()) {
    lose(flight);
    flights_.push_back(std::move(flight));
    return;
  }
  flight.arrival_ns = std::max(link_.request_arrival(flight.sent_ns), last_arrival_ns_);
  last_arrival_ns_ = flight.arrival_ns;
  flight.bytes = std::move(bytes);
  flights_.push_back(std::move(flight));
  pump();
}

void LinkedStream::pump() {
  const auto self = shared_from_this();  // a lingering stream may be let go below
  const int64_t now = monotonic_ns();
  bool wrote = false;
  for (Flight& f : flights_) {
    if (f.state != State::OnItsWay) continue;
    // Dropped on its way: a black hole began, or the connection was reset
    // or closed, after it left and before it arrived.
    if (lost_at_heals_ || link_.broke_between(f.sent_ns, std::min(now + 1, f.arrival_ns))) {
      lose(f);
      continue;
    }
    if (f.arrival_ns > now || link_.holds_requests()) break;
    // Written, then answered before anything else happens: requests that
    // arrive at one instant on several connections (a server let go) run
    // in the order they are written, every run alike, not in the order the
    // server happens to find its sockets ready.
    const int before = readable_bytes(fd_);
    if (write_all(fd_, f.bytes)) {
      const int64_t limit = real_monotonic_ns() + int64_t(kLingeringAnswerMs) * 1'000'000;
      pollfd p{fd_, POLLIN, 0};
      while (readable_bytes(fd_) <= before && real_monotonic_ns() < limit &&
             ::poll(&p, 1, 10) >= 0 && !(p.revents & (POLLERR | POLLHUP))) {
      }
    }
    f.bytes.clear();
    f.state = State::Written;
    f.written_ns = now;
    f.answer_ns = link_.answer_arrival(now);
    wrote = true;
    if (connection_closed_) {
      // Nobody reads its answer: dropped.
      char buffer[4096];
      while (::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT) > 0) {
      }
    } else {
      ++unread_;
    }
  }
  if (connection_closed_)
    std::erase_if(flights_, [](const Flight& f) { return f.state != State::OnItsWay; });
  // The next arrival's timer (a held server lets requests in at release()).
  const auto next = std::find_if(flights_.begin(), flights_.end(),
                                 [](const Flight& f) { return f.state == State::OnItsWay; });
  const std::optional<int64_t> due = next != flights_.end() && !link_.holds_requests()
                                         ? std::optional(next->arrival_ns)
                                         : std::nullopt;
  if (timer_ && (!due || timer_->first != *due)) {
    cancel_virtual_timer(timer_->first, timer_->second);
    timer_.reset();
  }
  // Off the run's fibers (its faults healed once it ended) nothing arrives any more.
  if (due && !timer_ && on_fiber()) {
    const uint64_t id = at_virtual_time(*due, [weak = weak_from_this()] {
      if (auto stream = weak.lock()) {
        stream->timer_.reset();
        stream->pump();
      }
    });
    timer_ = std::pair(*due, id);
  }
  if (wrote && told_) told_();
  {
    std::lock_guard lock(mu_);
    ++pumps_;
  }
  progress_.notify_all();
  if (connection_closed_ && next == flights_.end()) link_.forget(this);
}

void LinkedStream::wait(int64_t deadline_ns) {
  std::unique_lock lock(mu_);
  const uint64_t seen = pumps_;
  while (pumps_ == seen && monotonic_ns() < deadline_ns) progress_.wait_until(lock, deadline_ns);
}

LinkedStream::Fate LinkedStream::await_reset(int64_t deadline_ns) {
  for (;;) {
    if (broken()) return Fate::Broken;
    if (monotonic_ns() >= deadline_ns) return Fate::TimedOut;
    wait(deadline_ns);
  }
}

LinkedStream::Fate LinkedStream::await_written(int64_t deadline_ns) {
  for (;;) {
    const Flight& oldest = flights_.front();
    if (oldest.state == State::Written) return Fate::Arrived;
    if (broken()) return Fate::Broken;
    if (oldest.state == State::Lost) return await_reset(deadline_ns);
    if (monotonic_ns() >= deadline_ns) return Fate::TimedOut;
    wait(deadline_ns);
  }
}

LinkedStream::Fate LinkedStream::await_answer(int64_t deadline_ns) {
  const Flight oldest = flights_.front();
  flights_.pop_front();
  --unread_;
  for (;;) {
    const int64_t now = monotonic_ns();
    if (link_.broke_between(oldest.written_ns, std::min(now + 1, oldest.answer_ns))) {
      // Dropped on its way back: the connection has a hole now.
      if (!lost_at_heals_) lost_at_heals_ = link_.heals();
      return await_reset(deadline_ns);
    }
    if (now >= oldest.answer_ns) return Fate::Arrived;
    if (now >= deadline_ns) return Fate::TimedOut;
    wait(std::min(oldest.answer_ns, deadline_ns));
  }
}

}  // namespace locklab
