#include "fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"

namespace locklab {
namespace {

constexpr size_t kReadSize = 64 * 1024;
// Per direction of a connection: beyond this the proxy stops reading, so a
// long delay slows the sender down instead of growing memory.
constexpr size_t kMaxQueuedBytes = 1 << 20;
constexpr int kBacklog = 128;
constexpr int kAcceptBurst = 64;
constexpr int kBindAttempts = 10;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string system_error_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

sockaddr_in ipv4_address(const Endpoint& endpoint) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(endpoint.port));
  if (::inet_pton(AF_INET, endpoint.host.c_str(), &address.sin_addr) != 1)
    throw std::invalid_argument("FaultProxy: upstream must be a numeric IPv4 address, got '" +
                                endpoint.str() + "'");
  return address;
}

// Small requests must not wait for Nagle's algorithm: latency is ours to add.
void disable_nagle(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Closes with an RST instead of a FIN: the peer sees "connection reset".
void close_with_reset(int fd) {
  linger abort_on_close{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof abort_on_close);
  ::close(fd);
}

// Whether the peer has yet to acknowledge the FIN that shutdown(SHUT_WR)
// sent on `fd`. Its acknowledgement is the one sign, seen from this side,
// that the peer's kernel has taken the close in.
bool close_unacknowledged(int fd) {
  tcp_info info{};
  socklen_t size = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return false;
  return info.tcpi_state == TCP_ESTABLISHED || info.tcpi_state == TCP_FIN_WAIT1;
}

struct Chunk {
  int64_t due_ns;
  std::string bytes;
  size_t sent = 0;
};

// One direction of one proxied connection: bytes read, waiting for their
// time to be written to the other side.
struct Flow {
  std::deque<Chunk> queue;
  size_t queued_bytes = 0;
  int64_t last_due_ns = 0;
  bool source_closed = false;  // the sending side closed (EOF)
  bool write_blocked = false;  // the receiving side's buffer is full: wait for POLLOUT
};

struct Link {
  int client = -1;
  int server = -1;
  bool connecting = true;  // the upstream connect has not completed yet
  bool damaged = false;    // lost bytes or a close while blackholed
  bool closed = false;
  Flow to_server;
  Flow to_client;
};

enum class Mode { Pass, Blackhole, Reject };
enum class CloseHow { Fin, Reset };

struct Action {
  enum class Kind { Pass, Delay, Blackhole, Reject, Cut, Retarget } kind;
  Direction direction = Direction::Both;
  int64_t fixed_ns = 0;
  int64_t jitter_ns = 0;
  Endpoint upstream;  // Retarget
};

struct Latency {
  int64_t fixed_ns = 0;
  int64_t jitter_ns = 0;
};

}  // namespace

// The proxy's thread and everything only it touches (sockets, queues, mode).
// Other threads talk to it through submit(), which queues an action, wakes
// the thread and waits until the action has been applied.
class FaultProxy::Loop {
 public:
  Loop(Endpoint upstream, uint64_t seed, const std::string& listen_host);
  ~Loop();

  void submit(Action action);
  ProxyStats stats() const;

  Endpoint upstream() const;
  Endpoint endpoint;

 private:
  void run();
  bool apply_pending();  // false once the owner asked to stop
  void apply(const Action& action);
  void start_listening();
  void accept_clients();
  void finish_connect(Link& link);
  void read_from(Link& link, bool from_client);
  void flush(Link& link, bool to_server, int64_t now);
  void close_link(Link& link, CloseHow how);
  // Counts a link whose sockets were closed (or handed on) as closed.
  void forget(Link& link);
  void cut_links();
  int64_t next_due_ns() const;
  void wake();

  Endpoint upstream_;  // guarded by mu_ (the loop thread writes it, under mu_)
  sockaddr_in upstream_address_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  bool listening_ = false;
  Mode mode_ = Mode::Pass;
  Latency to_server_latency_;
  Latency to_client_latency_;
  std::mt19937_64 jitter_rng_;
  std::list<Link> links_;
  std::vector<char> read_buffer_ = std::vector<char>(kReadSize);

  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> open_{0};
  std::atomic<uint64_t> bytes_to_server_{0};
  std::atomic<uint64_t> bytes_to_client_{0};
  std::atomic<uint64_t> bytes_dropped_{0};

  mutable std::mutex mu_;
  std::condition_variable applied_cv_;
  std::vector<Action> pending_;
  uint64_t submitted_ = 0;
  uint64_t applied_ = 0;
  std::string failure_;  // why the last action could not be applied
  bool stopping_ = false;
  std::thread thread_;
};

FaultProxy::Loop::Loop(Endpoint upstream_endpoint, uint64_t seed, const std::string& listen_host)
    : upstream_(std::move(upstream_endpoint)),
      upstream_address_(ipv4_address(upstream_)),
      jitter_rng_(seed) {
  // An explicit port (not 0) keeps the socket bound while reject() stops
  // listening, so pass() can listen again on the same port.
  for (int attempt = 0; listen_fd_ < 0; ++attempt) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(system_error_text("FaultProxy: cannot create a socket"));
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    endpoint = Endpoint{listen_host, free_loopback_port()};
    sockaddr_in address = ipv4_address(endpoint);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
      listen_fd_ = fd;
      break;
    }
    std::string why = system_error_text("FaultProxy: cannot bind " + endpoint.str());
    ::close(fd);
    if (attempt + 1 == kBindAttempts) throw std::runtime_error(why);
  }
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    ::close(listen_fd_);
    throw std::runtime_error(system_error_text("FaultProxy: cannot create an eventfd"));
  }
  try {
    start_listening();
  } catch (...) {
    ::close(listen_fd_);
    ::close(wake_fd_);
    throw;
  }
  thread_ = std::thread([this] { run(); });
  pthread_setname_np(thread_.native_handle(), "locklab-proxy");  // for leak checks and debuggers
}

FaultProxy::Loop::~Loop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake();
  thread_.join();
  for (Link& link : links_) close_link(link, CloseHow::Fin);
  ::close(listen_fd_);
  ::close(wake_fd_);
}

void FaultProxy::Loop::wake() {
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void FaultProxy::Loop::submit(Action action) {
  std::unique_lock lock(mu_);
  pending_.push_back(action);
  uint64_t ticket = ++submitted_;
  wake();
  applied_cv_.wait(lock, [&] { return applied_ >= ticket; });
  if (!failure_.empty()) {
    std::string why = std::move(failure_);
    failure_.clear();
    throw std::runtime_error("FaultProxy " + endpoint.str() + " → " + upstream_.str() + ": " + why);
  }
}

Endpoint FaultProxy::Loop::upstream() const {
  std::lock_guard lock(mu_);
  return upstream_;
}

ProxyStats FaultProxy::Loop::stats() const {
  return ProxyStats{accepted_.load(), open_.load(), bytes_to_server_.load(),
                    bytes_to_client_.load(), bytes_dropped_.load()};
}

void FaultProxy::Loop::start_listening() {
  if (::listen(listen_fd_, kBacklog) != 0)
    throw std::runtime_error(system_error_text("cannot listen on " + endpoint.str()));
  listening_ = true;
}

bool FaultProxy::Loop::apply_pending() {
  std::vector<Action> actions;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    actions.swap(pending_);
  }
  for (const Action& action : actions) {
    std::string why;
    try {
      apply(action);
    } catch (const std::exception& e) {
      why = e.what();
    }
    std::lock_guard lock(mu_);
    if (!why.empty()) failure_ = why;
    ++applied_;
  }
  if (!actions.empty()) applied_cv_.notify_all();
  return true;
}

void FaultProxy::Loop::apply(const Action& action) {
  using Kind = Action::Kind;
  switch (action.kind) {
    case Kind::Pass:
      if (mode_ == Mode::Blackhole)
        for (Link& link : links_)
          if (link.damaged) close_link(link, CloseHow::Reset);
      to_server_latency_ = {};
      to_client_latency_ = {};
      mode_ = Mode::Pass;
      if (!listening_) start_listening();
      break;
    case Kind::Delay:
      if (action.direction != Direction::ToClient)
        to_server_latency_ = {action.fixed_ns, action.jitter_ns};
      if (action.direction != Direction::ToServer)
        to_client_latency_ = {action.fixed_ns, action.jitter_ns};
      break;
    case Kind::Blackhole:
      for (Link& link : links_) {
        for (Flow* flow : {&link.to_server, &link.to_client}) {
          if (flow->queued_bytes > 0) link.damaged = true;
          bytes_dropped_ += flow->queued_bytes;
          flow->queue.clear();
          flow->queued_bytes = 0;
        }
      }
      mode_ = Mode::Blackhole;
      if (!listening_) start_listening();
      break;
    case Kind::Reject:
      for (Link& link : links_) close_link(link, CloseHow::Reset);
      // On Linux, shutdown() of a listening socket resets the connections
      // waiting in its backlog and stops listening; the port stays bound.
      if (listening_ && ::shutdown(listen_fd_, SHUT_RD) != 0)
        throw std::runtime_error(system_error_text("cannot stop listening on " + endpoint.str()));
      listening_ = false;
      mode_ = Mode::Reject;
      break;
    case Kind::Retarget: {
      upstream_address_ = ipv4_address(action.upstream);
      std::lock_guard lock(mu_);
      upstream_ = action.upstream;
      break;
    }
    case Kind::Cut:
      cut_links();
      break;
  }
  links_.remove_if([](const Link& link) { return link.closed; });
}

void FaultProxy::Loop::close_link(Link& link, CloseHow how) {
  if (link.closed) return;
  for (int fd : {link.client, link.server}) {
    if (fd < 0) continue;
    if (how == CloseHow::Reset)
      close_with_reset(fd);
    else
      ::close(fd);
  }
  forget(link);
}

void FaultProxy::Loop::forget(Link& link) {
  link.client = link.server = -1;
  link.closed = true;
  --open_;
}

// A close reaches the client in the kernel's own time: on a busy machine the
// FIN can wait in another CPU's queue for milliseconds, and a command the
// client sends meanwhile goes out on the dead connection and is reset,
// unapplied. Whether a client follows a cut (a failover's) at its next
// command would then be decided by that race; waiting here for each FIN's
// acknowledgement decides it. The wait is short (the peer's delayed ACK, a
// few ms) and bounded, and the FINs go out together.
void FaultProxy::Loop::cut_links() {
  std::vector<int> closing;
  for (Link& link : links_) {
    if (link.closed) continue;
    if (link.server >= 0) ::close(link.server);
    if (link.client >= 0 && ::shutdown(link.client, SHUT_WR) == 0)
      closing.push_back(link.client);
    else if (link.client >= 0)
      ::close(link.client);
    forget(link);
  }
  const int64_t give_up_ns = now_ns() + std::chrono::nanoseconds(kCutSeenWithin).count();
  for (int fd : closing) {
    while (close_unacknowledged(fd) && now_ns() < give_up_ns)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    ::close(fd);
  }
}

void FaultProxy::Loop::accept_clients() {
  for (int i = 0; i < kAcceptBurst; ++i) {
    int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) return;  // EAGAIN, or a connection that died in the backlog
    ++accepted_;
    int server = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (server < 0) {
      close_with_reset(client);
      continue;
    }
    disable_nagle(client);
    disable_nagle(server);
    int rc = ::connect(server, reinterpret_cast<const sockaddr*>(&upstream_address_),
                       sizeof upstream_address_);
    if (rc != 0 && errno != EINPROGRESS) {
      // The upstream refuses: so does the proxy, as far as the client can tell.
      ::close(server);
      close_with_reset(client);
      continue;
    }
    Link& link = links_.emplace_back();
    link.client = client;
    link.server = server;
    link.connecting = rc != 0;
    ++open_;
  }
}

void FaultProxy::Loop::finish_connect(Link& link) {
  int error = 0;
  socklen_t size = sizeof error;
  if (::getsockopt(link.server, SOL_SOCKET, SO_ERROR, &error, &size) != 0 || error != 0) {
    close_link(link, CloseHow::Reset);
    return;
  }
  link.connecting = false;
}

void FaultProxy::Loop::read_from(Link& link, bool from_client) {
  int fd = from_client ? link.client : link.server;
  Flow& flow = from_client ? link.to_server : link.to_client;
  ssize_t n = ::recv(fd, read_buffer_.data(), read_buffer_.size(), 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (mode_ == Mode::Blackhole) {
    // Nothing crosses a partition, not even a close: the link is dead to us
    // and pass() will reset it.
    if (n > 0) bytes_dropped_ += n;
    if (n <= 0) flow.source_closed = true;
    link.damaged = true;
    return;
  }
  if (n < 0) {
    close_link(link, CloseHow::Reset);
    return;
  }
  if (n == 0) {
    flow.source_closed = true;
    return;
  }
  const Latency& latency = from_client ? to_server_latency_ : to_client_latency_;
  int64_t due = now_ns() + latency.fixed_ns;
  if (latency.jitter_ns > 0)
    due += std::uniform_int_distribution<int64_t>(0, latency.jitter_ns)(jitter_rng_);
  due = std::max(due, flow.last_due_ns);  // never overtake the chunk before
  flow.last_due_ns = due;
  flow.queue.push_back(Chunk{due, std::string(read_buffer_.data(), size_t(n))});
  flow.queued_bytes += size_t(n);
}

void FaultProxy::Loop::flush(Link& link, bool to_server, int64_t now) {
  Flow& flow = to_server ? link.to_server : link.to_client;
  int fd = to_server ? link.server : link.client;
  auto& delivered = to_server ? bytes_to_server_ : bytes_to_client_;
  flow.write_blocked = false;
  while (!flow.queue.empty() && flow.queue.front().due_ns <= now) {
    Chunk& chunk = flow.queue.front();
    ssize_t n =
        ::send(fd, chunk.bytes.data() + chunk.sent, chunk.bytes.size() - chunk.sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        flow.write_blocked = true;
      } else {
        close_link(link, CloseHow::Reset);
      }
      return;
    }
    chunk.sent += size_t(n);
    flow.queued_bytes -= size_t(n);
    delivered += uint64_t(n);
    if (chunk.sent == chunk.bytes.size()) flow.queue.pop_front();
  }
}

int64_t FaultProxy::Loop::next_due_ns() const {
  int64_t next = INT64_MAX;
  for (const Link& link : links_) {
    if (!link.connecting && !link.to_server.write_blocked && !link.to_server.queue.empty())
      next = std::min(next, link.to_server.queue.front().due_ns);
    if (!link.to_client.write_blocked && !link.to_client.queue.empty())
      next = std::min(next, link.to_client.queue.front().due_ns);
  }
  return next;
}

void FaultProxy::Loop::run() {
  struct Watch {
    Link* link;
    bool client_side;
  };
  std::vector<pollfd> fds;
  std::vector<Watch> watches;
  while (apply_pending()) {
    int64_t now = now_ns();
    for (Link& link : links_) {
      if (!link.closed && !link.connecting) flush(link, true, now);
      if (!link.closed) flush(link, false, now);
      // A side that closed has said all it will: close once its bytes are out.
      bool drained = (link.to_server.source_closed && link.to_server.queue.empty()) ||
                     (link.to_client.source_closed && link.to_client.queue.empty());
      if (!link.closed && mode_ != Mode::Blackhole && drained) close_link(link, CloseHow::Fin);
    }
    links_.remove_if([](const Link& link) { return link.closed; });

    fds.assign({pollfd{wake_fd_, POLLIN, 0}, pollfd{listening_ ? listen_fd_ : -1, POLLIN, 0}});
    watches.assign(2, Watch{nullptr, false});
    for (Link& link : links_) {
      auto wants_to_read = [&](const Flow& flow) {
        return !flow.source_closed &&
               (mode_ == Mode::Blackhole || flow.queued_bytes < kMaxQueuedBytes);
      };
      short client_events = short((wants_to_read(link.to_server) ? POLLIN : 0) |
                                  (link.to_client.write_blocked ? POLLOUT : 0));
      short server_events = link.connecting ? short(POLLOUT)
                                            : short((wants_to_read(link.to_client) ? POLLIN : 0) |
                                                    (link.to_server.write_blocked ? POLLOUT : 0));
      // A socket we want nothing from is left out, so its hang-up cannot spin the loop.
      fds.push_back(pollfd{client_events ? link.client : -1, client_events, 0});
      watches.push_back(Watch{&link, true});
      fds.push_back(pollfd{server_events ? link.server : -1, server_events, 0});
      watches.push_back(Watch{&link, false});
    }

    int64_t due = next_due_ns();
    timespec timeout{};
    timespec* wait = nullptr;  // no chunk waiting: sleep until an event
    if (due != INT64_MAX) {
      int64_t left = std::max<int64_t>(0, due - now_ns());
      timeout = {time_t(left / 1'000'000'000), long(left % 1'000'000'000)};
      wait = &timeout;
    }
    if (::ppoll(fds.data(), fds.size(), wait, nullptr) < 0) continue;  // EINTR

    if (fds[0].revents & POLLIN) {
      uint64_t ignored;
      (void)!::read(wake_fd_, &ignored, sizeof ignored);
    }
    if (fds[1].revents & POLLIN) accept_clients();
    for (size_t i = 2; i < fds.size(); ++i) {
      short revents = fds[i].revents;
      Link& link = *watches[i].link;
      if (!revents || link.closed) continue;
      if (!watches[i].client_side && link.connecting) {
        finish_connect(link);
      } else if (revents & (POLLIN | POLLHUP | POLLERR)) {
        // A hang-up or error shows up as EOF or an error from recv().
        if (fds[i].events & POLLIN) {
          read_from(link, watches[i].client_side);
        } else if (revents & POLLERR) {
          close_link(link, CloseHow::Reset);
        }
      }
      // POLLOUT needs nothing here: the flush at the top of the loop retries.
    }
  }
}

FaultProxy::FaultProxy(Endpoint upstream, uint64_t seed, const std::string& listen_host)
    : loop_(std::make_unique<Loop>(std::move(upstream), seed, listen_host)) {}

FaultProxy::~FaultProxy() = default;

Endpoint FaultProxy::endpoint() const {
  return loop_->endpoint;
}
Endpoint FaultProxy::upstream() const {
  return loop_->upstream();
}

void FaultProxy::retarget(Endpoint upstream) {
  ipv4_address(upstream);  // throws here, in the caller's thread, for a bad address
  loop_->submit({.kind = Action::Kind::Retarget, .upstream = std::move(upstream)});
}

void FaultProxy::pass() {
  loop_->submit({Action::Kind::Pass});
}

void FaultProxy::delay(Direction direction, std::chrono::milliseconds fixed,
                       std::chrono::milliseconds jitter) {
  if (fixed.count() < 0 || jitter.count() < 0)
    throw std::invalid_argument("FaultProxy::delay: negative latency");
  loop_->submit({Action::Kind::Delay, direction,
                 std::chrono::duration_cast<std::chrono::nanoseconds>(fixed).count(),
                 std::chrono::duration_cast<std::chrono::nanoseconds>(jitter).count()});
}

void FaultProxy::blackhole() {
  loop_->submit({Action::Kind::Blackhole});
}
void FaultProxy::reject() {
  loop_->submit({Action::Kind::Reject});
}
void FaultProxy::cut() {
  loop_->submit({Action::Kind::Cut});
}

ProxyStats FaultProxy::stats() const {
  return loop_->stats();
}

}  // namespace locklab
