// Many clients on one thread. A run's clients are fibers (Boost.Fiber) on a
// thread of their own, and each is suspended wherever a thread would block:
// waiting for a reply, sleeping, at its pause gate. When every client waits,
// the thread waits in one epoll_wait for all their sockets, timers and
// wake-ups from other threads, so one wake-up brings many replies where a
// thread per client took a context switch for each.
//
// On a run's virtual time (virtual_time.h), run_fibers' thread keeps that
// clock: its fibers sleep on it, and it moves only when every fiber waits
// and no answer is awaited.
//
// The waits below work on such a fiber and on any other thread alike, so the
// code above them (connections, clocks, lock implementations) is written as
// if it blocked a thread of its own. The one rule on a fiber: never block
// the thread itself (a plain mutex held across a wait, a blocking system
// call that can take long); run_blocking() is for work that must.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace locklab {

// Runs each task as a fiber of a new thread and returns once every task has
// returned. When tasks throw, the first exception is rethrown then. The
// thread keeps the caller's clock: the virtual time it is bound to, if any.
void run_fibers(std::vector<std::function<void()>> tasks);

// True on a fiber of run_fibers (or a BackgroundTask started from one).
bool on_fiber();

// Blocks the calling fiber (or, off run_fibers, the thread) for `d`, of
// virtual time on a fiber of a virtual run (at least 1 µs there, as a real
// sleep takes some time however short).
void sleep_for(std::chrono::nanoseconds d);

// Runs `work`, which may block its thread for a while (a fault applied by
// running a program, a pause of the caller): on a fiber, on a thread of its
// own while only the calling fiber waits for it; elsewhere, and on virtual
// time (whose clock stands still meanwhile), right here.
// Whatever `work` throws is rethrown here.
void run_blocking(const std::function<void()>& work);

// A connection got the answer to one request (or a message pushed to it). On
// a fiber of a virtual run it reaches the fiber a round trip (0.1 ms of
// virtual time) after the request left: the fiber sleeps that long. Nothing
// elsewhere.
void answer_received();

// On a fiber of a virtual run: calls `fire` on this thread once the virtual
// clock reaches `at_ns` (monotonic_ns() scale; at once if it has), in the
// order the timers were set, before the fibers woken by later timers of
// that instant run. `fire` must not wait. Returns an id for
// cancel_virtual_timer(). Throws std::logic_error anywhere else.
uint64_t at_virtual_time(int64_t at_ns, std::function<void()> fire);
// Cancels a timer of at_virtual_time() that has not fired (else nothing).
void cancel_virtual_timer(int64_t at_ns, uint64_t id);

// An id of the calling fiber, or of the thread off run_fibers: what a lock
// that names its holder's thread (Redisson) takes for one.
std::uintptr_t current_task_id();

// Work that runs beside its owner (a lock's watchdog): a fiber of the same
// thread when started on a fiber, a thread of its own otherwise. The
// destructor waits for `body` to return; tell it to stop first.
class BackgroundTask {
 public:
  explicit BackgroundTask(std::function<void()> body);
  ~BackgroundTask();
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;

 private:
  struct Runner;
  std::unique_ptr<Runner> runner_;
};

// A mutex whose waiters wait the way everything here does: a fiber is
// suspended and the other fibers of its thread go on; a thread off
// run_fibers blocks. Fibers and threads may share one.
class FiberMutex {
 public:
  FiberMutex();
  ~FiberMutex();
  FiberMutex(const FiberMutex&) = delete;
  FiberMutex& operator=(const FiberMutex&) = delete;

  void lock();
  void unlock();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A condition variable for fibers and threads alike: wait() suspends the
// calling fiber alone (or blocks the thread off run_fibers) and releases the
// caller's lock meanwhile, so the lock may be a std::mutex that a fiber
// never holds across a wait; notify_*() may come from any fiber or thread.
class FiberCondition {
 public:
  FiberCondition();
  ~FiberCondition();
  FiberCondition(const FiberCondition&) = delete;
  FiberCondition& operator=(const FiberCondition&) = delete;

  // Releases `lock`, waits for a notification (or a spurious wake-up) and
  // takes `lock` again before returning.
  void wait(std::unique_lock<FiberMutex>& lock);
  void wait(std::unique_lock<std::mutex>& lock);

  // Waits, as above, until a notification or `deadline_ns` (monotonic_ns()
  // scale: virtual time on a fiber of a virtual run), whichever comes first.
  void wait_until(std::unique_lock<std::mutex>& lock, int64_t deadline_ns);

  // Waits, as above, until `ready()` holds; `ready` is called with the lock held.
  template <class Lock, class Predicate>
  void wait(Lock& lock, Predicate ready) {
    while (!ready()) wait(lock);
  }

  // Wakes one waiter, or every waiter.
  void notify_one();
  void notify_all();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Waits for one socket to become readable or writable. On a fiber the socket
// is registered once with its thread's epoll, edge-triggered, and what the
// thread learns of it is kept until the caller says it has used it up
// (drained()); elsewhere every wait is a poll(2). Use it, and destroy it,
// on the fiber or thread that created it; destroy it before closing the
// socket.
class SocketWaiter {
 public:
  explicit SocketWaiter(int fd);
  ~SocketWaiter();
  SocketWaiter(const SocketWaiter&) = delete;
  SocketWaiter& operator=(const SocketWaiter&) = delete;

  // Waits until the socket may be ready for `events` (POLLIN or POLLOUT) or
  // has failed or been closed, or until `deadline`. True when it may be
  // ready (the caller finds out by reading or writing), false at the
  // deadline. On virtual time the wait is an answer awaited: no deadline
  // passes before it comes, every fiber waits for it, and a socket silent
  // for 10 s of real time throws std::runtime_error (the run cannot be
  // told on virtual time).
  bool wait(short events, std::chrono::steady_clock::time_point deadline);

  // The caller read (or wrote) until the socket had nothing more (or no
  // room): the next wait for `events` waits for news.
  void drained(short events);

  // The caller has `count` requests out on the socket whose answers it has
  // not read. On virtual time the clock waits for news from a socket with
  // requests out whether or not a fiber waits for them (a client paused
  // between a request and its answer); elsewhere nothing.
  void set_requests_out(size_t count);

  // What a fiber's thread knows of the socket (fibers.cpp).
  struct Registration;

 private:
  int fd_;
  std::unique_ptr<Registration> registration_;  // on a fiber only
};

}  // namespace locklab
