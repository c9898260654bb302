// One client's link to one server on a run's virtual time (virtual_time.h),
// carried by the client's own connection instead of a fault proxy: a
// proxy's thread moves bytes in real time, which a virtual clock cannot
// wait for. The nemesis breaks it as it breaks a proxy (NetworkLink), and
// stops the server behind it (hold); the connection (HiredisConnection,
// ConnectionOptions::link) asks it what the proxy, or the stopped server,
// would have done with each request and answer:
//   - passing: a request reaches the server after the link's delay to the
//     server (and jitter; never before the request sent before it), its
//     answer reaches the client after the delay back;
//   - a black hole: a request on its way or sent meanwhile is lost, and so
//     is every later one on that connection (a stream with a hole cannot go
//     on), and an answer on its way back too; the client waits out its
//     timeout, or until the hole heals, when the proxy resets the connection;
//   - refusing: every open connection is reset (what was on its way with
//     it) and a new one is refused;
//   - a cut: every open connection is closed once; a new one succeeds;
//   - held (a stopped or sleeping server): requests reach the server and
//     wait there, unread, until release(), then run in the order they came.
// An answer the server gave before the link broke, and had delivered,
// reaches the client: on virtual time the nemesis acts only once every
// request out is answered. What the server pushes unasked (a pub/sub
// message) is not delayed: the client reads it with the next answer.
//
// Used on the run's fiber thread only, like the connections that ask it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "fibers.h"
#include "listeners.h"
#include "network_link.h"

namespace locklab {

class LinkedStream;

class SimulatedLink final : public NetworkLink {
 public:
  // `seed` drives the delays' jitter.
  explicit SimulatedLink(uint64_t seed = 1);

  // NetworkLink. pass() heals the mode and the delays, not a hold.
  void pass() override;
  void delay(Direction direction, std::chrono::milliseconds fixed,
             std::chrono::milliseconds jitter) override;
  void blackhole() override;
  void reject() override;
  void cut() override;

  // The server stops reading, as a stopped or sleeping one: requests that
  // reach it wait until release(), which lets them in.
  void hold();
  void release();

  // A new connection is refused now.
  bool refuses_connections() const;
  // A request on its way is lost now.
  bool drops_requests() const;
  // A request that reached the server waits there now.
  bool holds_requests() const;
  // How many times every open connection was reset or closed (reject, cut):
  // a connection opened when this was n is gone once it is no longer n.
  uint64_t closes() const;
  // How many black holes healed: a connection that lost a request in the
  // black hole of count n is reset once this is no longer n.
  uint64_t heals() const;
  // When a request sent at `sent_ns` reaches the server, by this link's
  // delay to the server and its jitter (order is the caller's to keep).
  int64_t request_arrival(int64_t sent_ns);
  // When an answer the server gave at `given_ns` reaches the client.
  int64_t answer_arrival(int64_t given_ns);
  // Whether a black hole began, or the connections were reset or closed, at
  // or after `from_ns` and before `until_ns`: what was on its way meanwhile
  // was lost.
  bool broke_between(int64_t from_ns, int64_t until_ns) const;

  // Waits until the link changes (any call above that changes it) or the
  // monotonic_ns() of `deadline_ns` (virtual time on a fiber of a virtual run).
  void wait_for_change(int64_t deadline_ns);
  // `listener` is called after every change, on the changer's thread, with
  // no lock of the link's held. Returns an id for remove_listener().
  int on_change(std::function<void()> listener);
  void remove_listener(int id);

  // Keeps `stream`, whose connection closed with requests on their way,
  // until forget(): they still arrive (linked_stream.h).
  void linger(std::shared_ptr<LinkedStream> stream);
  void forget(const LinkedStream* stream);

 private:
  enum class Mode { Pass, Blackhole, Reject };
  struct Latency {
    int64_t fixed_ns = 0, jitter_ns = 0;
  };
  void changed(std::unique_lock<std::mutex>& lock);
  int64_t arrival(const Latency& latency, int64_t from_ns);

  mutable std::mutex mu_;
  FiberCondition change_;
  Mode mode_ = Mode::Pass;
  bool held_ = false;
  Latency to_server_, to_client_;
  std::mt19937_64 jitter_rng_;
  uint64_t closes_ = 0;
  uint64_t heals_ = 0;
  uint64_t changes_ = 0;
  std::vector<int64_t> breaks_;  // when each black hole began or the link reset or closed
  Listeners listeners_;
  // Last: a stream let go with the link removes its listener first.
  std::vector<std::shared_ptr<LinkedStream>> lingering_;
};

}  // namespace locklab
