// A Connection over a non-blocking socket, hiredis connecting it and parsing
// its replies (RESP2). Every wait goes through a SocketWaiter, so on a fiber
// (fibers.h) a client waiting for its reply lets the others on its thread
// go on. After a timeout the connection's replies no longer pair with its
// commands, so any I/O error or timeout drops it and the next command
// reconnects; so does a command sent after the server closed an idle
// connection (it is not lost on the dead one).
#pragma once

#include <functional>
#include <optional>

#include "connection.h"
#include "fibers.h"

struct redisContext;

namespace locklab {

class HiredisConnection final : public Connection {
 public:
  // `resolve` names the server to connect to; it is asked again at every
  // reconnect, so a Sentinel-backed resolver follows failovers.
  HiredisConnection(std::function<Endpoint()> resolve, ConnectionOptions options = {});
  HiredisConnection(Endpoint endpoint, ConnectionOptions options = {});
  ~HiredisConnection() override;

  void send(const std::vector<std::string>& argv) override;
  Reply receive() override;
  Reply receive_within(std::chrono::milliseconds timeout) override;
  std::string describe() const override;

  // Drops the current context (the next command reconnects).
  void disconnect();

 private:
  void connect();
  // Writes `argv` and records it as waiting for its reply.
  void write_command(const std::vector<std::string>& argv);
  [[noreturn]] void fail(const std::string& what, bool maybe_executed);
  // With a simulated link: the link reset or closed this connection since
  // it opened, or healed the black hole it lost a request in.
  bool broken_by_link() const;
  // With a simulated link: waits for the answer to `what`, a request lost
  // on the link, which never comes: throws RedisError at `timeout`, or when
  // the link resets the connection first.
  [[noreturn]] void await_lost(const std::string& what, std::chrono::milliseconds timeout);

  std::function<Endpoint()> resolve_;
  ConnectionOptions options_;
  Endpoint current_;
  redisContext* context_ = nullptr;     // owned; freed by disconnect()
  std::optional<SocketWaiter> waiter_;  // for context_'s socket
  // The commands sent whose replies are not yet received, oldest first, as
  // messages name them: pending_[first_pending_, pending_end_). The slots'
  // strings and the request buffer are reused, so a command allocates
  // nothing here (they are on the path of every command the lab sends).
  std::vector<std::string> pending_;
  size_t first_pending_ = 0, pending_end_ = 0;
  std::string request_;  // the command being sent, in RESP
  // With a simulated link: pending_[first_pending_, written_end_) reached
  // the server and the rest was lost; once one is lost, every later one is.
  size_t written_end_ = 0;
  bool lost_request_ = false;
  uint64_t closes_seen_ = 0;    // the link's closes() when this connection opened
  uint64_t heals_at_loss_ = 0;  // the link's heals() when it lost the first request
};

}  // namespace locklab
