#include "fibers.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "both_drivers.h"
#include "pause_gate.h"
#include "socket_pair.h"

namespace locklab {
namespace {

using namespace std::chrono;
using Steady = steady_clock;

TEST(RunFibers, RunsEveryTaskOnOneThreadOfItsOwn) {
  std::vector<std::thread::id> threads(3);
  std::vector<bool> on(3, false);
  std::vector<std::function<void()>> tasks;
  for (size_t i = 0; i < threads.size(); ++i)
    tasks.push_back([&, i] {
      threads[i] = std::this_thread::get_id();
      on[i] = on_fiber();
    });
  run_fibers(std::move(tasks));
  EXPECT_EQ(threads[0], threads[1]);
  EXPECT_EQ(threads[1], threads[2]);
  EXPECT_NE(threads[0], std::this_thread::get_id());
  EXPECT_EQ(on, std::vector<bool>(3, true));
  EXPECT_FALSE(on_fiber());
}

TEST(RunFibers, ASleepingFiberLetsTheOthersRun) {
  std::vector<std::string> order;
  run_fibers({[&] {
                sleep_for(milliseconds(50));
                order.push_back("slept");
              },
              [&] { order.push_back("ran"); }});
  EXPECT_EQ(order, (std::vector<std::string>{"ran", "slept"}));
}

TEST(RunFibers, AFiberWaitingOnItsSocketLetsTheOthersRunAndWakesForTheirByte) {
  SocketPair pair;
  bool woke = false;
  run_fibers({[&] {
                SocketWaiter waiter(pair.ends[0]);
                // Were the wait blocking the thread, the byte would never come.
                woke = waiter.wait(POLLIN, Steady::now() + seconds(10));
                EXPECT_EQ(pair.read_all(0), 1);
              },
              [&] { pair.write_byte(1); }});
  EXPECT_TRUE(woke);
}

TEST(RunFibers, TheFirstExceptionComesBackOnceEveryTaskEnded) {
  bool other_finished = false;
  try {
    run_fibers({[] { throw std::runtime_error("first"); },
                [&] {
                  sleep_for(milliseconds(20));
                  other_finished = true;
                },
                [] {
                  sleep_for(milliseconds(5));
                  throw std::runtime_error("second");
                }});
    FAIL() << "nothing was rethrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "first");
  }
  EXPECT_TRUE(other_finished);
}

TEST(SocketWaiter, AWaitOnASilentSocketEndsAtItsDeadline) {
  on_a_thread_and_on_a_fiber([] {
    SocketPair pair;
    SocketWaiter waiter(pair.ends[0]);
    const auto start = Steady::now();
    EXPECT_FALSE(waiter.wait(POLLIN, start + milliseconds(30)));
    EXPECT_GE(Steady::now() - start, milliseconds(30));
  });
}

TEST(SocketWaiter, DataThatCameBeforeTheWaitIsSeenAndADrainedSocketWaitsForMore) {
  on_a_thread_and_on_a_fiber([] {
    SocketPair pair;
    SocketWaiter waiter(pair.ends[0]);
    pair.write_byte(1);
    sleep_for(milliseconds(5));  // on a fiber: the thread hears of it before the wait
    EXPECT_TRUE(waiter.wait(POLLIN, Steady::now() + seconds(10)));
    EXPECT_EQ(pair.read_all(0), 1);
    waiter.drained(POLLIN);
    EXPECT_FALSE(waiter.wait(POLLIN, Steady::now() + milliseconds(20))) << "nothing new came";
    pair.write_byte(1);  // no sleep: the thread hears of it only while the fiber waits
    EXPECT_TRUE(waiter.wait(POLLIN, Steady::now() + seconds(10)));
    EXPECT_EQ(pair.read_all(0), 1);
  });
}

TEST(SocketWaiter, APeerThatClosesWakesTheReader) {
  on_a_thread_and_on_a_fiber([] {
    int ends[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends), 0);
    {
      SocketWaiter waiter(ends[0]);
      ::close(ends[1]);
      EXPECT_TRUE(waiter.wait(POLLIN, Steady::now() + seconds(10)));
      char byte;
      EXPECT_EQ(::read(ends[0], &byte, 1), 0) << "end of stream";
    }
    ::close(ends[0]);
  });
}

TEST(SocketWaiter, AWritableSocketIsReadyForWriting) {
  on_a_thread_and_on_a_fiber([] {
    SocketPair pair;
    SocketWaiter waiter(pair.ends[0]);
    EXPECT_TRUE(waiter.wait(POLLOUT, Steady::now() + seconds(10)));
  });
}

TEST(PauseGate, AClosedGateStopsItsFiberAloneAndAnotherThreadOpensIt) {
  PauseGate gate;
  gate.close();
  std::atomic<bool> other_ran{false};
  std::thread opener;
  std::vector<std::string> order;
  run_fibers({[&] {
                gate.pass();
                order.push_back("passed");
              },
              [&] {
                order.push_back("other ran");
                other_ran = true;
                // Opened from outside the fibers' thread, as the nemesis does.
                opener = std::thread([&] { gate.open(); });
              }});
  opener.join();
  EXPECT_EQ(order, (std::vector<std::string>{"other ran", "passed"}));
}

TEST(RunBlocking, OtherFibersGoOnWhileTheWorkBlocksAThread) {
  std::promise<void> released;
  std::future<void> released_future = released.get_future();
  bool work_saw_release = false;
  run_fibers({[&] {
                run_blocking([&] {
                  // Only a fiber of the same thread sets it: had run_blocking
                  // blocked that thread, this would wait in vain.
                  work_saw_release =
                      released_future.wait_for(seconds(10)) == std::future_status::ready;
                });
              },
              [&] { released.set_value(); }});
  EXPECT_TRUE(work_saw_release);
}

struct NotAnException {
  int code;
};

TEST(RunBlocking, RethrowsWhateverTheWorkThrew) {
  on_a_thread_and_on_a_fiber([] {
    try {
      run_blocking([] { throw NotAnException{7}; });
      ADD_FAILURE() << "nothing was rethrown";
    } catch (const NotAnException& e) {
      EXPECT_EQ(e.code, 7);
    }
  });
}

TEST(BackgroundTask, IsAFiberOfTheSameThreadOnAFiberAndAThreadElsewhere) {
  std::thread::id owner, task;
  bool task_on_fiber = false;
  run_fibers({[&] {
    owner = std::this_thread::get_id();
    BackgroundTask background([&] {
      task = std::this_thread::get_id();
      task_on_fiber = on_fiber();
    });
  }});
  EXPECT_EQ(owner, task);
  EXPECT_TRUE(task_on_fiber);

  {
    BackgroundTask background([&] {
      task = std::this_thread::get_id();
      task_on_fiber = on_fiber();
    });
  }
  EXPECT_NE(task, std::this_thread::get_id());
  EXPECT_FALSE(task_on_fiber);
}

TEST(CurrentTaskId, TellsFibersApart) {
  std::uintptr_t first = 0, second = 0;
  run_fibers({[&] { first = current_task_id(); }, [&] { second = current_task_id(); }});
  EXPECT_NE(first, 0u);
  EXPECT_NE(first, second);
}

}  // namespace
}  // namespace locklab
