// A Connection over hiredis (blocking API, RESP2). A timed-out hiredis context
// is unusable, so any I/O error or timeout drops the context and the next
// command reconnects; so does a command sent after the server closed an idle
// connection (it is not lost on the dead one).
#pragma once

#include <functional>

#include "connection.h"

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
  [[noreturn]] void fail(const std::string& what, bool maybe_executed);

  std::function<Endpoint()> resolve_;
  ConnectionOptions options_;
  Endpoint current_;
  redisContext* context_ = nullptr;   // owned; freed by disconnect()
  std::vector<std::string> pending_;  // commands sent, replies not yet received (for messages)
};

}  // namespace locklab
