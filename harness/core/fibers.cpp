#include "fibers.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/fiber/all.hpp>
#include <cerrno>
#include <optional>
#include <system_error>
#include <thread>

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
};

namespace {

// Boost.Fiber's round robin, except for what happens when no fiber is
// ready: the thread then waits in epoll_wait for the earliest timer, the
// registered sockets and the eventfd other threads write to wake it, and
// wakes every fiber waiting on a socket that reported something.
class EpollScheduler final : public fibers::algo::algorithm {
 public:
  explicit EpollScheduler(std::shared_ptr<Epoll> epoll) : epoll_(std::move(epoll)) {
    this_thread_scheduler = this;
  }
  ~EpollScheduler() override { this_thread_scheduler = nullptr; }

  void awakened(fibers::context* ctx) noexcept override { ctx->ready_link(ready_); }

  fibers::context* pick_next() noexcept override {
    if (ready_.empty()) return nullptr;
    fibers::context* next = &ready_.front();
    ready_.pop_front();
    return next;
  }

  bool has_ready_fibers() const noexcept override { return !ready_.empty(); }

  // Called by the dispatcher only, with no fiber's lock held: the one place
  // where waking fibers from here is safe.
  void suspend_until(const Steady::time_point& until) noexcept override {
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
      if (socket->waiting) socket->changed.notify_all();
    }
  }

  // From other threads: a fiber of this one was made ready.
  void notify() noexcept override {
    const uint64_t one = 1;
    (void)!::write(epoll_->wake_fd, &one, sizeof one);
  }

  const std::shared_ptr<Epoll>& epoll() const { return epoll_; }

 private:
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
};

}  // namespace

void run_fibers(std::vector<std::function<void()>> tasks) {
  auto epoll = std::make_shared<Epoll>();
  std::exception_ptr first_error;
  auto keep_first = [&first_error] {
    if (!first_error) first_error = std::current_exception();
  };
  std::thread loop([&] {
    fibers::use_scheduling_algorithm<EpollScheduler>(epoll);
    try {
      std::vector<fibers::fiber> running;
      for (auto& task : tasks)
        running.emplace_back(fibers::launch::post, std::allocator_arg,
                             fibers::protected_fixedsize_stack(kStackBytes), [&task, &keep_first] {
                               try {
                                 task();
                               } catch (...) {
                                 keep_first();
                               }
                             });
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
  if (on_fiber())
    boost::this_fiber::sleep_for(d);
  else
    std::this_thread::sleep_for(d);
}

void run_blocking(const std::function<void()>& work) {
  if (!on_fiber()) return work();
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

std::uintptr_t current_task_id() {
  return reinterpret_cast<std::uintptr_t>(fibers::context::active());
}

struct BackgroundTask::Runner {
  std::optional<fibers::fiber> fiber;
  std::optional<std::thread> thread;
};

BackgroundTask::BackgroundTask(std::function<void()> body) : runner_(std::make_unique<Runner>()) {
  if (on_fiber())
    runner_->fiber.emplace(fibers::launch::post, std::allocator_arg,
                           fibers::protected_fixedsize_stack(kStackBytes), std::move(body));
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
  if (registration_) ::epoll_ctl(registration_->epoll->fd, EPOLL_CTL_DEL, fd_, nullptr);
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
