// The only way lock code talks to Redis. The harness decides what is behind
// a Connection: hiredis straight to a server, through a fault proxy, or a
// server found through Sentinel.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace locklab {

class SimulatedLink;

struct Endpoint {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string str() const { return host + ":" + std::to_string(port); }
  // Parses "host:port"; throws std::invalid_argument naming the text.
  static Endpoint parse(const std::string& text);
  bool operator==(const Endpoint&) const = default;
};

// One RESP reply. A Redis error reply (e.g. NOSCRIPT, WRONGTYPE) is a Reply of
// type Error, not an exception: the command reached the server and ran.
struct Reply {
  enum class Type { Nil, Status, Error, Integer, String, Array };
  Type type = Type::Nil;
  std::string str;  // Status, Error, String
  long long integer = 0;
  std::vector<Reply> elements;

  bool is_nil() const { return type == Type::Nil; }
  bool is_error() const { return type == Type::Error; }
  bool is_ok() const { return type == Type::Status && str == "OK"; }
  std::string describe() const;  // for error messages and logs
};

// A command that could not complete. `maybe_executed` is false when the
// request certainly never reached the server (could not connect) and true
// when it may have run (timeout or I/O error after sending): the difference
// between a `fail` and an `info` in the history.
class RedisError : public std::runtime_error {
 public:
  RedisError(const std::string& what, bool maybe_executed)
      : std::runtime_error(what), maybe_executed_(maybe_executed) {}
  bool maybe_executed() const { return maybe_executed_; }

 private:
  bool maybe_executed_;
};

struct ConnectionOptions {
  std::chrono::milliseconds connect_timeout{500};
  std::chrono::milliseconds command_timeout{1000};
  // Sent as AUTH [username] password on every (re)connect, when a password is
  // set: a server with requirepass or ACL users refuses everything before it.
  std::string username;
  std::string password;
  // How errors name the server ("node 0"); empty: by its address. A run on
  // virtual time names its servers so that its history repeats, ports and all.
  std::string name;
  // On virtual time, each answer reaches the caller a round trip after its
  // request left (answer_received, fibers.h): a client's connections. The
  // lab's own (the nemesis's, a server's readiness probe) take no time.
  bool answers_take_time = false;
  // On virtual time, a client's link to the server (simulated_link.h): the
  // connection carries it instead of a fault proxy. Not owned; outlives the
  // connection. nullptr: a plain connection.
  SimulatedLink* link = nullptr;
};

class Connection {
 public:
  virtual ~Connection() = default;

  // Sends one command and waits for its reply, at most the command timeout.
  // Throws RedisError naming the endpoint and the command on timeout or I/O
  // error; the next call reconnects.
  Reply command(const std::vector<std::string>& argv) {
    send(argv);
    return receive();
  }

  // Writes one command without waiting for its reply (pipelining, and
  // Redlock's "send to all nodes, then collect"). Connects first if needed.
  virtual void send(const std::vector<std::string>& argv) = 0;

  // Returns the reply to the oldest command sent and not yet received,
  // waiting at most the command timeout. Throws RedisError like command().
  virtual Reply receive() = 0;

  // receive(), but waiting at most `timeout` (measured on the monotonic clock)
  // for the reply instead of the command timeout; 0 or less takes only a
  // reply that has already arrived. On a miss it throws RedisError with
  // maybe_executed() true and drops the connection, like a timed-out
  // receive(). For callers that wait on several connections under one
  // deadline (Redlock's per-instance timeout).
  virtual Reply receive_within(std::chrono::milliseconds timeout) = 0;

  // Where this connection goes (for the current connection; it may change
  // after a reconnect when the endpoint comes from Sentinel).
  virtual std::string describe() const = 0;
};

}  // namespace locklab
