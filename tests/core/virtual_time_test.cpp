// Virtual time (harness/core/virtual_time.h) as the fiber scheduler keeps it:
// sleeps take no real time, timers fire in order at their exact times, and
// the clock stands still while a request waits for its answer, whether or
// not its fiber waits for it. The "server" here is a thread writing to a
// socket pair; tests/runner/virtual_time_test.cpp does the same with
// redis-server.
#include "virtual_time.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "clock.h"
#include "fibers.h"
#include "socket_pair.h"

namespace locklab {
namespace {

using namespace std::chrono;

constexpr int64_t kMs = 1'000'000;

// Real seconds `work` takes.
template <class Work>
double real_seconds(Work work) {
  const auto start = steady_clock::now();
  work();
  return duration<double>(steady_clock::now() - start).count();
}

TEST(VirtualTime, SleepsTakeTheirVirtualTimeAndNoRealTime) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  const int64_t start = monotonic_ns();
  std::vector<std::pair<std::string, int64_t>> woke;  // who, when (ms since start)
  const double took = real_seconds([&] {
    run_fibers({[&] {
                  sleep_for(seconds(30));
                  woke.emplace_back("long", (monotonic_ns() - start) / kMs);
                },
                [&] {
                  for (int i = 0; i < 3; ++i) {
                    sleep_for(milliseconds(250));
                    woke.emplace_back("short", (monotonic_ns() - start) / kMs);
                  }
                }});
  });
  EXPECT_LT(took, 5.0) << "30 s of virtual sleep took real time";
  const std::vector<std::pair<std::string, int64_t>> expected{
      {"short", 250}, {"short", 500}, {"short", 750}, {"long", 30'000}};
  EXPECT_EQ(woke, expected);
  EXPECT_EQ(monotonic_ns() - start, 30'000 * kMs);
  EXPECT_EQ(time.wall_ns(), VirtualTime::kStartWallNs + 30'000 * kMs);
}

TEST(VirtualTime, TimersDueTogetherFireInTheOrderTheyWereSet) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  std::vector<int> order;
  std::vector<std::function<void()>> tasks;
  for (int i = 0; i < 5; ++i)
    tasks.push_back([&order, i] {
      sleep_for(milliseconds(10));
      order.push_back(i);
    });
  run_fibers(std::move(tasks));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(VirtualTime, AConditionWaitEndsAtItsVirtualDeadlineOrWhenNotified) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  const int64_t start = monotonic_ns();
  std::mutex mu;
  FiberCondition condition;
  bool told = false;
  int64_t timed_out_at = -1, told_at = -1;
  run_fibers({[&] {
                std::unique_lock lock(mu);
                condition.wait_until(lock, start + 400 * kMs);  // nobody notifies it
                timed_out_at = (monotonic_ns() - start) / kMs;
              },
              [&] {
                std::unique_lock lock(mu);
                while (!told) condition.wait_until(lock, start + 10'000 * kMs);
                told_at = (monotonic_ns() - start) / kMs;
              },
              [&] {
                sleep_for(milliseconds(700));
                std::lock_guard lock(mu);
                told = true;
                condition.notify_all();
              }});
  EXPECT_EQ(timed_out_at, 400);
  EXPECT_EQ(told_at, 700);
}

// A fiber sends a "request" on one end of a socket pair and a thread answers
// it after 300 ms of real time, while another fiber sleeps 1 ms of virtual
// time: the sleeper must not wake before the answer is in.
void expect_clock_held_until_answered(bool requester_waits) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  SocketPair sockets;
  std::atomic<bool> answered{false};
  bool answered_when_sleeper_woke = false;
  int64_t requester_read_at = -1;
  const int64_t start = monotonic_ns();
  std::thread server([&] {
    std::this_thread::sleep_for(milliseconds(300));
    answered = true;
    (void)!::write(sockets.ends[1], "+OK\r\n", 5);
  });
  run_fibers({[&] {
                SocketWaiter waiter(sockets.ends[0]);
                waiter.set_requests_out(1);
                if (requester_waits) {
                  waiter.wait(POLLIN, steady_clock::now() + seconds(30));
                  requester_read_at = monotonic_ns() - start;
                } else {
                  // Paused between its request and its answer: it waits for
                  // nothing the socket says.
                  sleep_for(milliseconds(50));
                  requester_read_at = monotonic_ns() - start;
                }
                waiter.set_requests_out(0);
              },
              [&] {
                sleep_for(milliseconds(1));
                answered_when_sleeper_woke = answered;
              }});
  server.join();
  EXPECT_TRUE(answered_when_sleeper_woke) << "the clock moved while a request was out";
  if (requester_waits) {
    EXPECT_EQ(requester_read_at, 0) << "the clock moved during the wait";
  }
}

TEST(VirtualTime, TheClockStandsStillWhileAFiberAwaitsAnAnswer) {
  expect_clock_held_until_answered(true);
}

TEST(VirtualTime, TheClockStandsStillWhileARequestIsOutThoughNobodyWaits) {
  expect_clock_held_until_answered(false);
}

TEST(VirtualTime, AnAnswerCostsOneRoundTripOfVirtualTime) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  const int64_t start = monotonic_ns();
  int64_t after = -1;
  run_fibers({[&] {
    answer_received();
    answer_received();
    after = monotonic_ns() - start;
  }});
  EXPECT_EQ(after, 2 * 100'000);
}

TEST(VirtualTime, ASocketThatNeverAnswersFailsTheWaitInsteadOfHoldingTheClock) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  SocketPair sockets;  // nobody ever writes to ends[1]
  std::string error;
  const double took = real_seconds([&] {
    run_fibers({[&] {
      SocketWaiter waiter(sockets.ends[0]);
      try {
        waiter.wait(POLLIN, steady_clock::now() + seconds(1));
      } catch (const std::runtime_error& e) {
        error = e.what();
      }
    }});
  });
  EXPECT_NE(error.find("virtual time"), std::string::npos) << error;
  EXPECT_LT(took, 30.0);
}

TEST(VirtualTime, OffVirtualTimeEverythingKeepsRealTime) {
  EXPECT_EQ(bound_virtual_time(), nullptr);
  const int64_t before = monotonic_ns();
  run_fibers({[] { sleep_for(milliseconds(20)); }});
  EXPECT_GE(monotonic_ns() - before, 20 * kMs);
}

TEST(TimeMode, NamesRoundTripAndAnUnknownOneIsRefusedWithTheChoices) {
  for (TimeMode mode : {TimeMode::Real, TimeMode::Virtual, TimeMode::Auto})
    EXPECT_EQ(time_mode_named(time_mode_name(mode)), mode);
  try {
    time_mode_named("simulated");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("real, virtual, auto"), std::string::npos);
  }
}

}  // namespace
}  // namespace locklab
