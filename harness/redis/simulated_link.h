// One client's link to one server on a run's virtual time (virtual_time.h),
// carried by the client's own connection instead of a fault proxy: a
// proxy's thread moves bytes in real time, which a virtual clock cannot
// wait for. The nemesis breaks it as it breaks a proxy (NetworkLink); the
// connection (HiredisConnection, ConnectionOptions::link) asks it, at each
// request, what the proxy would have done with that request:
//   - passing: the request reaches the server;
//   - a black hole: the request is lost, and so is every later one on that
//     connection (a stream with a hole cannot go on); its answer is awaited
//     until the command's timeout, or until the hole heals, when the proxy
//     resets the connection;
//   - refusing: every open connection is reset and a new one is refused;
//   - a cut: every open connection is closed once; a new one succeeds.
// An answer the server gave before the link broke reaches the client: on
// virtual time the nemesis acts only once every request out is answered,
// and a proxy forwards an answer as it comes.
//
// Delays are not modelled (the plan runs a delayed link in real time).
// Used on the run's fiber thread only, like the connections that ask it.
#pragma once

#include <cstdint>
#include <mutex>

#include "fibers.h"
#include "network_link.h"

namespace locklab {

class SimulatedLink final : public NetworkLink {
 public:
  // NetworkLink.
  void pass() override;
  // Only the undoing of a delay (0 ms, no jitter) is accepted: throws
  // std::logic_error for a delay, which keeps real time.
  void delay(Direction direction, std::chrono::milliseconds fixed,
             std::chrono::milliseconds jitter) override;
  void blackhole() override;
  void reject() override;
  void cut() override;

  // A new connection is refused now.
  bool refuses_connections() const;
  // A request sent now is lost.
  bool drops_requests() const;
  // How many times every open connection was reset or closed (reject, cut):
  // a connection opened when this was n is gone once it is no longer n.
  uint64_t closes() const;
  // How many black holes healed: a connection that lost a request in the
  // black hole of count n is reset once this is no longer n.
  uint64_t heals() const;
  // Waits until the link changes (any call above) or the monotonic_ns() of
  // `deadline_ns` (virtual time on a fiber of a virtual run).
  void wait_for_change(int64_t deadline_ns);

 private:
  enum class Mode { Pass, Blackhole, Reject };
  void changed(std::unique_lock<std::mutex>& lock);

  mutable std::mutex mu_;
  FiberCondition change_;
  Mode mode_ = Mode::Pass;
  uint64_t closes_ = 0;
  uint64_t heals_ = 0;
  uint64_t changes_ = 0;
};

}  // namespace locklab
