// A stop-the-world switch for one client: while closed, every thread of the
// client that reaches a step boundary (a Redis command, a clock reading, a
// sleep) blocks until it opens again.
#pragma once

#include <condition_variable>
#include <mutex>

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

 private:
  std::mutex mu_;
  std::condition_variable opened_;
  int closed_ = 0;
};

}  // namespace locklab
