// A Connection over a non-blocking socket, hiredis connecting it and parsing
// its replies (RESP2). Every wait goes through a SocketWaiter, so on a fiber
// (fibers.h) a client waiting for its reply lets the others on its thread
// go on. After a timeout the connection's replies no longer pair with its
// commands, so any I/O error or timeout drops it and the next command
// reconnects; so does a command sent after the server closed an idle
// connection (it is not lost on the dead one). Over a simulated link
// (ConnectionOptions::link, on virtual time) each command and its answer go
// through the link's stream (linked_stream.h), which delays, loses or holds
// them as the nemesis made the link.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "connection.h"
#include "fibers.h"
#include "linked_stream.h"

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
  // Reads the reply to the oldest command sent (`what`), waiting for it at
  // most `timeout` from now, until `deadline`.
  Reply read_reply(const std::string& what, std::chrono::milliseconds timeout,
                   std::chrono::steady_clock::time_point deadline);
  // With a simulated link: what the link did with the oldest command
  // (`what`) and its answer, throwing RedisError as the connection would
  // have failed (timed out, or reset).
  void check_fate(LinkedStream::Fate fate, const std::string& what,
                  std::chrono::milliseconds timeout);

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
  // With a simulated link (ConnectionOptions::link): what it does with the
  // commands sent on this socket.
  std::shared_ptr<LinkedStream> stream_;
};

}  // namespace locklab
