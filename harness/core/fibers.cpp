#include "fibers.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/fiber/all.hpp>
#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "clock.h"
#include "virtual_time.h"

namespace locklab {
namespace {

namespace fibers = boost::fibers;
using Steady = std::chrono::steady_clock;

// Each fiber's stack. The lock code, hiredis' reply parser, nlohmann/json
// and exceptions together stay far below it; the guard page below it turns
// an overflow into a crash instead of a quiet corruption.
constexpr size_t kStackBytes = 512 * 1024;

// A condition variable's lock where the waiter and whoever wakes it run on
// one thread: the fiber scheduler never runs both at once, so there is
// nothing to guard between them.
struct SameThread {
  void lock() {}
  void unlock() {}
};

// The epoll instance of one run_fibers thread and the eventfd other threads
// write to wake it. Shared with every socket registered on it, so that one
// destroyed after the thread ended still has a valid epoll to leave.
struct Epoll {
  int fd = -1, wake_fd = -1;
  Epoll() {
    fd = ::epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
    wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd < 0) {
      ::close(fd);
      throw std::system_error(errno, std::generic_category(), "eventfd");
    }
    epoll_event wake{};
    wake.events = EPOLLIN;
    wake.data.ptr = nullptr;  // the one event without a SocketWaiter
    if (::epoll_ctl(fd, EPOLL_CTL_ADD, wake_fd, &wake) != 0) {
      const int e = errno;
      ::close(wake_fd);
      ::close(fd);
      throw std::system_error(e, std::generic_category(), "epoll_ctl");
    }
  }
  ~Epoll() {
    ::close(wake_fd);
    ::close(fd);
  }
  Epoll(const Epoll&) = delete;
  Epoll& operator=(const Epoll&) = delete;
};

class EpollScheduler;
// The scheduler of this thread when it is a run_fibers thread.
thread_local EpollScheduler* this_thread_scheduler = nullptr;

}  // namespace

// What the thread has learnt of one socket, and the fiber waiting on it.
struct SocketWaiter::Registration {
  std::shared_ptr<Epoll> epoll;
  uint32_t interest = EPOLLIN | EPOLLRDHUP | EPOLLET;
  uint32_t seen = 0;  // events reported since the caller last drained them
  bool waiting = false;
  fibers::condition_variable_any changed;
  // In virtual time: a fiber waits here for an answer, which holds the clock
  // (and every other fiber) until the socket reports; `abandoned` once it
  // waited kAnswerLimit of real time for nothing.
  int64_t awaiting_since_ns = -1;  // real_monotonic_ns(); -1: not awaiting
  uint32_t awaited = 0;            // the events that answer it
  bool abandoned = false;
  // Requests sent whose answers were not read (set_requests_out), and
  // whether the socket reported anything since the last was sent: until it
  // does, the clock waits, whether or not a fiber waits for them.
  size_t requests_out = 0;
  int64_t requests_since_ns = -1;  // real_monotonic_ns() of the last request sent
  bool news_since_request = true;

  // The socket holds a virtual clock: an answer is awaited, or due.
  bool holds_clock() const {
    if (abandoned) return false;
    if (awaited && !(seen & awaited)) return true;
    return requests_out > 0 && !news_since_request;
  }
};

namespace {

// How long, in real time, a virtual run waits for one answer before it gives
// up on the run: a server that never answers (stopped, or asleep in real
// time) would otherwise hold its clock for ever.
constexpr auto kAnswerLimit = std::chrono::seconds(10);

// What an answer costs in virtual time: it reaches its client this long
// after the request left (a loopback round trip's order of magnitude).
constexpr auto kRoundTrip = std::chrono::microseconds(100);

// The least a sleep takes in virtual time, however short it was asked to be.
constexpr auto kShortestSleep = std::chrono::microseconds(1);

// Boost.Fiber's round robin, except for what happens when no fiber is
// ready: the thread then waits in epoll_wait for the earliest timer, the
// registered sockets and the eventfd other threads write to wake it, and
// wakes every fiber waiting on a socket that reported something.
//
// On virtual time (virtual_time.h) it is also the run's clock keeper. A
// fiber that waits for an answer holds every other fiber until the answer
// is in, so one request is out at a time and the servers see them in one
// order, every run alike. Timers are its own, on the virtual clock; when no
// fiber is ready and no answer is awaited, it moves the clock to the
// earliest timer and fires every timer due then, in the order they were set.
class EpollScheduler final : public fibers::algo::algorithm {
 public:
  EpollScheduler(std::shared_ptr<Epoll> epoll, VirtualTime* time)
      : epoll_(std::move(epoll)), time_(time) {
    this_thread_scheduler = this;
  }
  ~EpollScheduler() override { this_thread_scheduler = nullptr; }

  void awakened(fibers::context* ctx) noexcept override { ctx->ready_link(ready_); }

  fibers::context* pick_next() noexcept override {
    if (ready_.empty()) return nullptr;
    // While an answer is awaited only the dispatcher runs: the loop of
    // suspend_until() that waits for the answer is its.
    if (answer_awaited()) {
      for (fibers::context& ctx : ready_)
        if (ctx.is_context(fibers::type::dispatcher_context)) {
          ctx.ready_unlink();
          return &ctx;
        }
      return nullptr;
    }
    fibers::context* next = &ready_.front();
    ready_.pop_front();
    return next;
  }

  bool has_ready_fibers() const noexcept override { return !ready_.empty() && !answer_awaited(); }

  // Called by the dispatcher only, with no fiber's lock held: the one place
  // where waking fibers from here is safe.
  void suspend_until(const Steady::time_point& until) noexcept override {
    if (time_) return keep_virtual_time(until);
    take_events(until);
  }

  // From other threads: a fiber of this one was made ready.
  void notify() noexcept override {
    const uint64_t one = 1;
    (void)!::write(epoll_->wake_fd, &one, sizeof one);
  }

  const std::shared_ptr<Epoll>& epoll() const { return epoll_; }
  VirtualTime* virtual_time() const { return time_; }

  // Virtual time: calls `fire` once the clock reaches `at_ns`, unless
  // cancelled first. Returns the timer's id.
  uint64_t add_timer(int64_t at_ns, std::function<void()> fire) {
    const uint64_t id = next_timer_++;
    timers_.emplace(std::pair(at_ns, id), std::move(fire));
    return id;
  }
  void cancel_timer(int64_t at_ns, uint64_t id) { timers_.erase(std::pair(at_ns, id)); }

  // Virtual time: `socket` may hold the clock (holds_clock), or no longer can.
  void watch(SocketWaiter::Registration* socket) { watched_.insert(socket); }
  void unwatch(SocketWaiter::Registration* socket) { watched_.erase(socket); }

  // The id current_task_id() gives the fiber `ctx`: in launch order on
  // virtual time, so that a history naming it repeats.
  void name_fiber(fibers::context* ctx) { fiber_ids_[ctx] = ++fibers_named_; }
  void forget_fiber(fibers::context* ctx) { fiber_ids_.erase(ctx); }
  std::optional<std::uintptr_t> fiber_id(fibers::context* ctx) const {
    auto it = fiber_ids_.find(ctx);
    if (it == fiber_ids_.end()) return std::nullopt;
    return it->second;
  }

 private:
  // Waits for the sockets until `until` at the latest and wakes whoever
  // they concern.
  void take_events(const Steady::time_point& until) {
    epoll_event events[64];
    const int n = wait_for_events(events, until);
    for (int i = 0; i < n; ++i) {
      auto* socket = static_cast<SocketWaiter::Registration*>(events[i].data.ptr);
      if (!socket) {
        uint64_t count;
        (void)!::read(epoll_->wake_fd, &count, sizeof count);
        continue;
      }
      socket->seen |= events[i].events;
      if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        socket->news_since_request = true;
      if (socket->waiting) socket->changed.notify_all();
    }
  }

  // Some socket holds the clock: a fiber waits for its answer, or a request
  // is out on it with no news yet.
  bool answer_awaited() const {
    for (const SocketWaiter::Registration* socket : watched_)
      if (socket->holds_clock()) return true;
    return false;
  }

  // The virtual-time half of suspend_until: news first; then, with nothing
  // awaited and nothing ready, the clock moves.
  void keep_virtual_time(const Steady::time_point& until) {
    take_events(Steady::now());
    if (!ready_.empty() && !answer_awaited()) return;
    if (answer_awaited()) {
      take_events(Steady::now() + std::chrono::milliseconds(50));
      give_up_on_silent_sockets();
      return;
    }
    if (timers_.empty()) return take_events(until);  // a wake-up from another thread
    const int64_t due = timers_.begin()->first.first;
    time_->advance_to(due);
    // Every timer due now fires, in the order set; a timer set by one that
    // fires waits for the next round, however early.
    std::vector<std::function<void()>> firing;
    while (!timers_.empty() && timers_.begin()->first.first <= time_->now_ns()) {
      firing.push_back(std::move(timers_.begin()->second));
      timers_.erase(timers_.begin());
    }
    for (auto& fire : firing) fire();
  }

  void give_up_on_silent_sockets() {
    const int64_t now = real_monotonic_ns();
    const int64_t limit =
        std::chrono::duration_cast<std::chrono::nanoseconds>(kAnswerLimit).count();
    for (SocketWaiter::Registration* socket : watched_)
      if (socket->holds_clock() &&
          now - std::max(socket->awaiting_since_ns, socket->requests_since_ns) >= limit) {
        socket->abandoned = true;
        socket->changed.notify_all();
      }
  }

  int wait_for_events(epoll_event* events, const Steady::time_point& until) {
    const bool forever = until == Steady::time_point::max();
    const auto left = forever ? Steady::duration::zero()
                              : std::max(until - Steady::now(), Steady::duration::zero());
    // epoll_pwait2 (Linux 5.11) takes timers to the nanosecond, epoll_wait to the millisecond.
    static std::atomic<bool> fine_timeouts = true;
    if (fine_timeouts) {
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      timespec timeout{time_t(ns / 1'000'000'000), long(ns % 1'000'000'000)};
      const int n = ::epoll_pwait2(epoll_->fd, events, 64, forever ? nullptr : &timeout, nullptr);
      if (n >= 0 || errno != ENOSYS) return std::max(n, 0);
      fine_timeouts = false;
    }
    const int ms = forever ? -1 : int(std::chrono::ceil<std::chrono::milliseconds>(left).count());
    return std::max(::epoll_wait(epoll_->fd, events, 64, ms), 0);
  }

  std::shared_ptr<Epoll> epoll_;
  fibers::scheduler::ready_queue_type ready_;
  VirtualTime* time_;                                                     // nullptr: real time
  std::map<std::pair<int64_t, uint64_t>, std::function<void()>> timers_;  // (due, id) → fire
  uint64_t next_timer_ = 0;
  std::set<SocketWaiter::Registration*> watched_;
  std::map<fibers::context*, std::uintptr_t> fiber_ids_;
  std::uintptr_t fibers_named_ = 0;
};

// Runs `body` as a fiber of this thread, named for current_task_id().
fibers::fiber launch_fiber(std::function<void()> body) {
  return fibers::fiber(fibers::launch::post, std::allocator_arg,
                       fibers::protected_fixedsize_stack(kStackBytes), [body = std::move(body)] {
                         EpollScheduler* scheduler = this_thread_scheduler;
                         fibers::context* self = fibers::context::active();
                         if (scheduler) scheduler->name_fiber(self);
                         body();  // a fiber that throws ends the program
                         if (scheduler) scheduler->forget_fiber(self);
                       });
}

// Virtual time: blocks the calling fiber on `condition` until it is notified
// or `deadline_ns` (virtual) comes, whichever is first.
template <class Lock>
void wait_virtual(EpollScheduler& scheduler, int64_t deadline_ns, Lock& lock,
                  fibers::condition_variable_any& condition) {
  bool fired = false;
  const uint64_t timer = scheduler.add_timer(deadline_ns, [&] {
    fired = true;
    condition.notify_all();
  });
  condition.wait(lock);
  if (!fired) scheduler.cancel_timer(deadline_ns, timer);
}

}  // namespace

void run_fibers(std::vector<std::function<void()>> tasks) {
  auto epoll = std::make_shared<Epoll>();
  VirtualTime* time = bound_virtual_time();  // the fibers keep the caller's clock
  std::exception_ptr first_error;
  auto keep_first = [&first_error] {
    if (!first_error) first_error = std::current_exception();
  };
  std::thread loop([&] {
    VirtualTimeBinding binding(time);
    fibers::use_scheduling_algorithm<EpollScheduler>(epoll, time);
    try {
      std::vector<fibers::fiber> running;
      for (auto& task : tasks)
        running.push_back(launch_fiber([&task, &keep_first] {
          try {
            task();
          } catch (...) {
            keep_first();
          }
        }));
      for (auto& fiber : running) fiber.join();
    } catch (...) {
      keep_first();
    }
  });
  pthread_setname_np(loop.native_handle(), "locklab-fibers");  // for profilers and debuggers
  loop.join();
  if (first_error) std::rethrow_exception(first_error);
}

bool on_fiber() {
  return this_thread_scheduler != nullptr;
}

void sleep_for(std::chrono::nanoseconds d) {
  EpollScheduler* scheduler = this_thread_scheduler;
  if (scheduler && scheduler->virtual_time()) {
    // Every sleep takes some time, as a real one does: a loop that sleeps
    // for what its clock says is left (rounded to nothing by a fast clock)
    // still sees the clock move.
    d = std::max<std::chrono::nanoseconds>(d, kShortestSleep);
    SameThread lock;
    fibers::condition_variable_any woken;
    const int64_t deadline = scheduler->virtual_time()->now_ns() + d.count();
    while (scheduler->virtual_time()->now_ns() < deadline)
      wait_virtual(*scheduler, deadline, lock, woken);
  } else if (scheduler) {
    boost::this_fiber::sleep_for(d);
  } else {
    std::this_thread::sleep_for(d);
  }
}

void run_blocking(const std::function<void()>& work) {
  // In virtual time the clock stands still while `work` runs anyway, and
  // every other fiber had better wait for it: it runs right here.
  if (!on_fiber() || this_thread_scheduler->virtual_time()) return work();
  fibers::promise<void> done;
  fibers::future<void> result = done.get_future();
  std::thread helper([&] {
    try {
      work();
      done.set_value();
    } catch (...) {
      done.set_exception(std::current_exception());
    }
  });
  result.wait();
  helper.join();  // it has nothing left to do but end
  result.get();
}

void answer_received() {
  // One sleep per answer, however many reads it took, so that time passes
  // alike in every run: a loop that asks again at once (a lock polling a key
  // about to expire) sees time pass, as it would on a network.
  if (EpollScheduler* scheduler = this_thread_scheduler; scheduler && scheduler->virtual_time())
    sleep_for(kRoundTrip);
}

uint64_t at_virtual_time(int64_t at_ns, std::function<void()> fire) {
  EpollScheduler* scheduler = this_thread_scheduler;
  if (!scheduler || !scheduler->virtual_time())
    throw std::logic_error("at_virtual_time: not on a fiber of a virtual run");
  return scheduler->add_timer(at_ns, std::move(fire));  // a past one fires at the next turn
}

void cancel_virtual_timer(int64_t at_ns, uint64_t id) {
  if (EpollScheduler* scheduler = this_thread_scheduler; scheduler && scheduler->virtual_time())
    scheduler->cancel_timer(at_ns, id);
}

std::uintptr_t current_task_id() {
  fibers::context* self = fibers::context::active();
  if (EpollScheduler* scheduler = this_thread_scheduler; scheduler && scheduler->virtual_time())
    if (auto id = scheduler->fiber_id(self)) return *id;
  return reinterpret_cast<std::uintptr_t>(self);
}

struct BackgroundTask::Runner {
  std::optional<fibers::fiber> fiber;
  std::optional<std::thread> thread;
};

BackgroundTask::BackgroundTask(std::function<void()> body) : runner_(std::make_unique<Runner>()) {
  if (on_fiber())
    runner_->fiber.emplace(launch_fiber(std::move(body)));
  else
    runner_->thread.emplace(std::move(body));
}

BackgroundTask::~BackgroundTask() {
  if (runner_->fiber) runner_->fiber->join();
  if (runner_->thread) runner_->thread->join();
}

struct FiberMutex::Impl {
  fibers::mutex mutex;
};

FiberMutex::FiberMutex() : impl_(std::make_unique<Impl>()) {}
FiberMutex::~FiberMutex() = default;

void FiberMutex::lock() {
  impl_->mutex.lock();
}

void FiberMutex::unlock() {
  impl_->mutex.unlock();
}

struct FiberCondition::Impl {
  fibers::condition_variable_any condition;
};

FiberCondition::FiberCondition() : impl_(std::make_unique<Impl>()) {}
FiberCondition::~FiberCondition() = default;

void FiberCondition::wait(std::unique_lock<FiberMutex>& lock) {
  impl_->condition.wait(lock);
}

void FiberCondition::wait(std::unique_lock<std::mutex>& lock) {
  impl_->condition.wait(lock);
}

void FiberCondition::wait_until(std::unique_lock<std::mutex>& lock, int64_t deadline_ns) {
  if (EpollScheduler* scheduler = this_thread_scheduler; scheduler && scheduler->virtual_time())
    return wait_virtual(*scheduler, deadline_ns, lock, impl_->condition);
  const auto left = std::chrono::nanoseconds(deadline_ns - monotonic_ns());
  impl_->condition.wait_for(lock, std::max(left, std::chrono::nanoseconds(0)));
}

void FiberCondition::notify_one() {
  impl_->condition.notify_one();
}

void FiberCondition::notify_all() {
  impl_->condition.notify_all();
}

SocketWaiter::SocketWaiter(int fd) : fd_(fd) {
  if (!this_thread_scheduler) return;
  auto registration = std::make_unique<Registration>();
  registration->epoll = this_thread_scheduler->epoll();
  epoll_event event{};
  event.events = registration->interest;
  event.data.ptr = registration.get();
  if (::epoll_ctl(registration->epoll->fd, EPOLL_CTL_ADD, fd_, &event) != 0)
    throw std::system_error(errno, std::generic_category(), "epoll_ctl");
  registration_ = std::move(registration);
}

SocketWaiter::~SocketWaiter() {
  if (!registration_) return;
  ::epoll_ctl(registration_->epoll->fd, EPOLL_CTL_DEL, fd_, nullptr);
  if (this_thread_scheduler) this_thread_scheduler->unwatch(registration_.get());
}

void SocketWaiter::set_requests_out(size_t count) {
  EpollScheduler* scheduler = this_thread_scheduler;
  if (!registration_ || !scheduler || !scheduler->virtual_time()) return;
  Registration& r = *registration_;
  if (count > r.requests_out) {  // one more sent: news from now on answer it
    r.news_since_request = false;
    r.requests_since_ns = real_monotonic_ns();
    r.abandoned = false;
  }
  r.requests_out = count;
  if (count > 0)
    scheduler->watch(&r);
  else if (!r.awaited)
    scheduler->unwatch(&r);
}

bool SocketWaiter::wait(short events, Steady::time_point deadline) {
  if (!registration_) {
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Steady::now());
      pollfd ready{fd_, events, 0};
      const int n = ::poll(&ready, 1, int(std::max<int64_t>(0, left.count())));
      if (n > 0) return true;
      if (n < 0 && errno != EINTR) return true;  // the caller's read or write tells what failed
      if (n == 0 && left.count() <= 0) return false;
    }
  }
  Registration& r = *registration_;
  const bool out = events & POLLOUT;
  const uint32_t wanted =
      out ? EPOLLOUT | EPOLLHUP | EPOLLERR : EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR;
  // Room to write is asked for only while someone waits for it: otherwise
  // every acknowledgement from the peer would be an event.
  auto set_interest = [&](uint32_t interest) {
    epoll_event event{};
    event.events = interest;
    event.data.ptr = &r;
    ::epoll_ctl(r.epoll->fd, EPOLL_CTL_MOD, fd_, &event);
  };
  if (out) set_interest(r.interest | EPOLLOUT);
  SameThread lock;
  r.waiting = true;
  if (EpollScheduler* scheduler = this_thread_scheduler; scheduler && scheduler->virtual_time()) {
    // The answer comes before the clock moves: no deadline can pass meanwhile.
    r.awaiting_since_ns = real_monotonic_ns();
    r.awaited = wanted;
    r.abandoned = false;
    scheduler->watch(&r);
    // Suspended whether or not the answer is in already, so that the fibers
    // run in one order in every run: when the answer came is a race.
    if (r.seen & wanted) boost::this_fiber::yield();
    while (!(r.seen & wanted) && !r.abandoned) r.changed.wait(lock);
    r.awaited = 0;
    r.awaiting_since_ns = -1;
    if (r.requests_out == 0) scheduler->unwatch(&r);
    if (!(r.seen & wanted)) {
      r.waiting = false;
      if (out) set_interest(r.interest);
      throw std::runtime_error(
          "virtual time: a socket of this run gave no answer within " +
          std::to_string(kAnswerLimit.count()) +
          " s of real time (a server that never answers holds a virtual clock; run the cell "
          "with --time real)");
    }
    r.waiting = false;
    if (out) set_interest(r.interest);
    return true;
  }
  while (!(r.seen & wanted))
    if (r.changed.wait_until(lock, deadline) == fibers::cv_status::timeout) break;
  r.waiting = false;
  const bool ready = r.seen & wanted;
  if (out) {
    set_interest(r.interest);
    r.seen &= ~uint32_t(EPOLLOUT);
  }
  return ready;
}

void SocketWaiter::drained(short events) {
  if (!registration_) return;
  if (events & POLLIN) registration_->seen &= ~uint32_t(EPOLLIN);
  if (events & POLLOUT) registration_->seen &= ~uint32_t(EPOLLOUT);
}

}  // namespace locklab
