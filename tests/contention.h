// Clients contending for one lock around a read-modify-write that loses
// updates unless their critical sections exclude each other: the negative
// control every lock, built-in or behind an adapter, must pass without faults.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "clock.h"
#include "lock.h"

namespace locklab::testing {

struct ContentionHold {
  size_t client;
  int64_t invoked_ns, begin_ns, end_ns;  // acquire called, returned Done, critical section left
};

struct Contention {
  int rounds = 0;  // asked for: locks × iterations
  int counter = 0;
  int completed = 0;
  std::vector<ContentionHold> holds;  // by begin_ns
  std::vector<std::string> failures;
};

// Each lock in a thread of its own, `iterations` times: acquire "L" (TTL 5 s,
// waiting up to 15 s), read the counter, sleep `inside`, write it + 1,
// release, sleep `outside` (work outside the lock lets the others in).
inline Contention contend(const std::vector<Lock*>& locks, int iterations,
                          std::chrono::milliseconds inside, std::chrono::milliseconds outside) {
  using namespace std::chrono_literals;
  Contention run;
  run.rounds = int(locks.size()) * iterations;
  std::atomic<int> counter{0}, completed{0};
  std::mutex mu;
  std::vector<std::thread> threads;
  for (size_t id = 0; id < locks.size(); ++id) {
    threads.emplace_back([&, id, lock = locks[id]] {
      for (int round = 0; round < iterations; ++round) {
        const int64_t invoked = monotonic_ns();
        AcquireResult acquired = lock->acquire("L", 5000ms, 15000ms);
        if (acquired.outcome != Outcome::Done) {
          std::lock_guard guard(mu);
          run.failures.push_back("acquire: " + acquired.error);
          continue;
        }
        const int64_t begin = monotonic_ns();
        const int read = counter.load();
        std::this_thread::sleep_for(inside);
        counter.store(read + 1);
        const int64_t end = monotonic_ns();
        ++completed;
        {
          std::lock_guard guard(mu);
          run.holds.push_back({id, invoked, begin, end});
        }
        ChangeResult released = lock->release("L", *acquired.lease);
        if (released.outcome != Outcome::Done) {
          std::lock_guard guard(mu);
          run.failures.push_back("release: " + released.error);
        }
        std::this_thread::sleep_for(outside);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  run.counter = counter.load();
  run.completed = completed.load();
  std::sort(
      run.holds.begin(), run.holds.end(),
      [](const ContentionHold& a, const ContentionHold& b) { return a.begin_ns < b.begin_ns; });
  return run;
}

// Expects every round done with no failure, no lost update and no two holds
// overlapping.
inline void expect_exclusive(const Contention& run) {
  EXPECT_TRUE(run.failures.empty())
      << run.failures.size() << " failures, first: " << run.failures.front();
  EXPECT_EQ(run.completed, run.rounds);
  EXPECT_EQ(run.counter, run.completed) << "lost updates: critical sections overlapped";
  for (size_t i = 1; i < run.holds.size(); ++i)
    EXPECT_GE(run.holds[i].begin_ns, run.holds[i - 1].end_ns)
        << "holds of clients " << run.holds[i - 1].client << " and " << run.holds[i].client
        << " overlap";
}

// How many acquires had to wait: another client held the lock while they were
// being called. Zero means the test did not contend.
inline int acquires_that_waited(const Contention& run) {
  int waited = 0;
  for (const ContentionHold& mine : run.holds)
    waited += std::any_of(run.holds.begin(), run.holds.end(), [&](const ContentionHold& other) {
      return other.client != mine.client && other.begin_ns < mine.begin_ns &&
             other.end_ns > mine.invoked_ns;
    });
  return waited;
}

}  // namespace locklab::testing
