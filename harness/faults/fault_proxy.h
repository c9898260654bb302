// A TCP proxy on one link (client → node, or replica → master) that the
// nemesis turns into a bad network: added latency, a black hole, refused
// connections, or cut connections. It needs no privileges and no netem;
// netns.h is the kernel-level alternative (namespaces, iptables, netem).
//
// It listens on a free 127.0.0.1 port (or a port of another local address of
// the lab's, such as its end of a veth) and opens one upstream connection per
// accepted client. One thread moves the bytes; the control methods may be
// called from any thread, and each returns once the proxy has applied it.
// pass(), blackhole() and reject() each replace the proxy's mode; delay()
// changes only the latency and cut() acts once, both keeping the mode.
//
// No stream ever has a hole: bytes are delivered in order or the connection
// is closed. Destroying the proxy stops its thread and closes every socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "connection.h"
#include "network_link.h"

namespace locklab {

struct ProxyStats {
  uint64_t connections_accepted = 0;
  uint64_t open_connections = 0;
  uint64_t bytes_to_server = 0;  // delivered upstream
  uint64_t bytes_to_client = 0;  // delivered back to clients
  uint64_t bytes_dropped = 0;    // read while blackholed, never delivered
};

class FaultProxy final : public NetworkLink {
 public:
  // Starts forwarding to `upstream` (connected once per client, so the
  // upstream may be down or restart; a client whose upstream connection
  // fails is reset). `seed` drives the delay jitter.
  // Throws std::runtime_error if no port can be bound on `listen_host`.
  explicit FaultProxy(Endpoint upstream, uint64_t seed = 1,
                      const std::string& listen_host = "127.0.0.1");
  ~FaultProxy() override;
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  // Where clients connect instead of the upstream.
  Endpoint endpoint() const;
  // Where new connections go (the constructor's upstream, or the last retarget()).
  Endpoint upstream() const;
  // New connections go to `upstream` from now on; open ones keep their own
  // (cut() them to move them too). Throws std::invalid_argument for an
  // address that is not numeric IPv4.
  void retarget(Endpoint upstream);

  // Heals every fault: forwards at once again, accepts new connections.
  // Connections that lost bytes while blackholed are reset here (a stream
  // with a hole cannot continue); the others carry on.
  void pass() override;

  // Delays every chunk read from now on in `direction` by `fixed` plus a
  // uniform random [0, jitter], without reordering: a chunk never leaves
  // before the one read before it. Bytes already queued keep their time.
  void delay(Direction direction, std::chrono::milliseconds fixed,
             std::chrono::milliseconds jitter = std::chrono::milliseconds(0)) override;

  // A partition: sockets stay open and new connections are accepted, but
  // nothing crosses in either direction, not even a close. Bytes read are
  // dropped (and counted), so requests hang until the client's own timeout.
  void blackhole() override;

  // Resets every open connection (RST on both sides) and refuses new ones
  // (the listening socket stops listening but keeps its port), so commands
  // fail fast and a new connection fails before anything is sent.
  void reject() override;

  // Closes every open connection once (FIN on both sides) and keeps
  // accepting, like a network blip: a command in flight fails, a reconnect
  // succeeds. Returns once each client's kernel has acknowledged the close
  // (at most kCutSeenWithin), so a client's next command finds its
  // connection closed rather than racing the close to the proxy.
  void cut() override;
  static constexpr std::chrono::milliseconds kCutSeenWithin{1000};

  ProxyStats stats() const;

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace locklab
