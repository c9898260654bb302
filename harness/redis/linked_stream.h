// The requests of one connection over a SimulatedLink (simulated_link.h):
// the connection's half of the link, which writes each request to the
// server's socket when it arrives there and tells the connection what
// became of it and of its answer. HiredisConnection opens one per socket it
// connects over a link, and asks it at every send and receive.
//
// A request on its way is written by a virtual timer (fibers.h) when its
// delay has passed, or when a stopped server is released, whether or not
// its connection still waits for it: as through a proxy, a request that
// left reaches the server even after its client gave up. Its stream
// writes it through a duplicate of the socket, closed once nothing is on
// its way. Answers are read by the connection as they come (the clock
// stands still meanwhile) and handed to the caller when they would have
// crossed the link back.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "fibers.h"
#include "simulated_link.h"

namespace locklab {

class LinkedStream : public std::enable_shared_from_this<LinkedStream> {
 public:
  // What became of the oldest request, or of its answer.
  enum class Fate {
    Arrived,   // the request reached the server (await_written), or its answer the client
    Broken,    // the link reset or closed the connection: the caller fails at once
    TimedOut,  // the deadline came first
  };

  // A stream over `link` on the connected socket `fd` (duplicated here).
  // Throws std::runtime_error when the socket cannot be duplicated.
  static std::shared_ptr<LinkedStream> open(SimulatedLink& link, int fd);
  struct Key {};  // open() is the way to make one
  LinkedStream(Key, SimulatedLink& link, int fd);
  ~LinkedStream();
  LinkedStream(const LinkedStream&) = delete;
  LinkedStream& operator=(const LinkedStream&) = delete;

  // `told` is called whenever requests on their way were written to the
  // server (from a virtual timer or a change of the link): the connection
  // counts them as awaiting answers (unread()).
  void on_written(std::function<void()> told);
  // The connection closed its socket: what is on its way still arrives
  // (the link keeps the stream until then), and nothing is told any more.
  void close();

  // Sends one request (its RESP bytes) now: written at once when the link
  // neither delays nor holds it, else when it arrives; lost when the link
  // drops it. Every request after a lost one is lost too.
  void send(std::string bytes);

  // Waits until the oldest request reached the server (Arrived: its answer
  // is, or will be, in the socket), or the link broke the connection, or
  // `deadline_ns` (monotonic_ns()). A lost request never arrives: it waits
  // until the link resets the connection or the deadline.
  Fate await_written(int64_t deadline_ns);
  // After the oldest request's answer was read from the socket: waits until
  // it would have crossed the link back (Arrived; the request is then done
  // with), or the link broke on its way (Broken, or a wait until the
  // deadline when a black hole swallowed it), or `deadline_ns`.
  Fate await_answer(int64_t deadline_ns);

  // The link reset or closed this connection, or healed the black hole it
  // lost a request in: the connection is to be dropped.
  bool broken() const;
  // Requests written whose answers the connection has not read.
  size_t unread() const { return unread_; }

 private:
  enum class State { OnItsWay, Written, Lost };
  struct Flight {
    State state = State::OnItsWay;
    std::string bytes;         // while on its way
    int64_t sent_ns = 0;       // when the client sent it
    int64_t arrival_ns = 0;    // when it reaches the server
    int64_t written_ns = -1;   // when it was written (the server answered then)
    int64_t answer_ns = 0;     // when its answer reaches the client
    bool answer_read = false;  // the connection read its answer
  };

  // Writes every request that has arrived (unless the server is held),
  // marks the lost ones, and sets the timer for the next arrival.
  void pump();
  void lose(Flight& flight);
  // Waits for a pump or a change of the link, or `deadline_ns`.
  void wait(int64_t deadline_ns);
  // Until the link resets the connection (Broken) or the deadline (TimedOut).
  Fate await_reset(int64_t deadline_ns);

  SimulatedLink& link_;
  int fd_;  // the duplicate; -1 once closed
  bool connection_closed_ = false;
  uint64_t closes_seen_;                   // the link's closes() when the socket connected
  std::optional<uint64_t> lost_at_heals_;  // the link's heals() when a request was lost
  std::deque<Flight> flights_;             // every request not done with, oldest first
  size_t unread_ = 0;
  int64_t last_arrival_ns_ = 0;                        // a request never overtakes the one before
  std::optional<std::pair<int64_t, uint64_t>> timer_;  // (due, id) of the next arrival's
  int listener_ = -1;
  std::function<void()> told_;
  std::mutex mu_;  // for progress_ only: everything runs on the run's fiber thread
  FiberCondition progress_;
  uint64_t pumps_ = 0;
};

}  // namespace locklab
