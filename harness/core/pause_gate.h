// A stop-the-world switch for one client: while closed, every fiber or
// thread of the client that reaches a step boundary (a Redis command, a clock
// reading, a sleep) blocks until it opens again. A fiber blocks alone: the
// other clients on its thread go on (fibers.h).
#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include "fibers.h"

namespace locklab {

class PauseGate {
 public:
  // Returns at once while open; blocks while closed.
  void pass();
  // Blocks threads that pass from now on; nests (two closes need two opens).
  void close();
  // Undoes one close(); wakes blocked threads when the last one is undone.
  void open();
  bool is_closed();
  // `listener(true)` runs when the gate closes (first close), `listener(false)`
  // when it opens again (last open), on the thread that changed it: for parts
  // of a client that do not pass the gate themselves (an adapter process to
  // SIGSTOP/SIGCONT).
  void on_change(std::function<void(bool closed)> listener);

 private:
  FiberMutex mu_;
  FiberCondition opened_;
  // Changed under mu_; read without it by pass() while open, the case on
  // every step of every client.
  std::atomic<int> closed_ = 0;
  std::vector<std::function<void(bool)>> listeners_;
};

}  // namespace locklab
