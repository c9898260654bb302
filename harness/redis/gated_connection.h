// A Connection that belongs to a pausable client: every send and every reply
// first passes the client's PauseGate, so a stop-the-world pause freezes the
// client's Redis traffic (its watchdog's included) at the next command, and a
// reply that arrived during the pause is seen only after it.
#pragma once

#include <memory>

#include "connection.h"
#include "pause_gate.h"

namespace locklab {

class GatedConnection final : public Connection {
 public:
  GatedConnection(std::unique_ptr<Connection> inner, PauseGate& gate)
      : inner_(std::move(inner)), gate_(gate) {}

  void send(const std::vector<std::string>& argv) override {
    gate_.pass();
    inner_->send(argv);
  }
  Reply receive() override {
    Reply reply = inner_->receive();
    gate_.pass();
    return reply;
  }
  // The gate is passed only once the reply is in (or the wait is over), so a
  // pause never eats into `timeout`: that is the network's time.
  Reply receive_within(std::chrono::milliseconds timeout) override {
    Reply reply = inner_->receive_within(timeout);
    gate_.pass();
    return reply;
  }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::unique_ptr<Connection> inner_;
  PauseGate& gate_;
};

}  // namespace locklab
