// A stop-the-world switch for one client: while closed, every thread of the
// client that reaches a step boundary (a Redis command, a clock reading, a
// sleep) blocks until it opens again.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

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
  std::mutex mu_;
  std::condition_variable opened_;
  int closed_ = 0;
  std::vector<std::function<void(bool)>> listeners_;
};

}  // namespace locklab
