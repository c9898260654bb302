// The clocks of adapters kept between runs (AdapterPool). An adapter on a
// clock of its own (client clock faults reach it through the clock shim)
// maps its clock's file when it starts, so a kept adapter can serve a later
// run only on that same clock. The clocks wait here between runs, back at
// real time, so that a run on a clock of its own takes a kept adapter, as
// every other run does, instead of starting a runtime for every client.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server_clock.h"

namespace locklab {

class AdapterClocks {
 public:
  // A clock for a client of an adapter started by `command`: the one given
  // back last for that command (an adapter of the pool may be waiting on
  // it), or a new one. Throws as ServerClock() does.
  std::unique_ptr<ServerClock> take(const std::string& command);

  // Sets `clock` back to real time and keeps it for a later take() of
  // `command`.
  void give_back(const std::string& command, std::unique_ptr<ServerClock> clock);

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<std::unique_ptr<ServerClock>>> idle_;
};

}  // namespace locklab
