// One client's way to one server, as the nemesis breaks it: the same fault
// vocabulary whichever backend carries the traffic (a FaultProxy in user
// space, or iptables rules in a server's network namespace).
#pragma once

#include <chrono>

namespace locklab {

enum class Direction { ToServer, ToClient, Both };

class NetworkLink {
 public:
  virtual ~NetworkLink() = default;
  // Heals every fault.
  virtual void pass() = 0;
  // Adds latency to every packet or chunk from now on, keeping the mode.
  virtual void delay(Direction direction, std::chrono::milliseconds fixed,
                     std::chrono::milliseconds jitter = std::chrono::milliseconds(0)) = 0;
  // A partition that hangs: nothing crosses, requests wait for their timeout.
  virtual void blackhole() = 0;
  // A partition that fails fast: connections are reset, new ones refused.
  virtual void reject() = 0;
  // Closes the open connections once; new ones succeed.
  virtual void cut() = 0;
};

}  // namespace locklab
