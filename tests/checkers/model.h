// Random histories for property tests: a model of correct locking (every
// history it writes is free of violations), and violations to plant in one.
//
// Everything is driven by a list of numbers ("choices"), consumed in order,
// so RapidCheck can shrink a failing case to a short history.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "event.h"

namespace locklab::testing {

// Hands out the choices; 0 once they run out.
class Choices {
 public:
  explicit Choices(const std::vector<uint32_t>& values) : values_(values) {}
  bool done() const { return next_ >= values_.size(); }
  // A number in [0, n).
  uint32_t below(uint32_t n) { return done() ? 0 : values_[next_++] % n; }

 private:
  const std::vector<uint32_t>& values_;
  size_t next_ = 0;
};

// Clients c1..cN on locks L0..Lk (some re-entrant, some fenced, some with the
// classic unconditional-DEL unlock, TTL 1 or 3 ms) against a model of
// Redis and of the protected counter. Each operation takes effect at some
// point between its invoke and its completion; an acquire retries its SET
// until it completes. Acquires only succeed on a free lock, only holders
// write, reads see the counter, tokens grow, reported depths are the real
// ones. A live client renews its key while it holds the lock (a watchdog);
// other keys (crashed clients, `lost`, unknown outcomes) expire after the
// TTL. Outcomes are sometimes unknown (info, applied or not), `lost` and
// extends happen, nemesis events are interleaved, and clients crash, some
// recording the completion of their last operation after the crash event.
std::vector<history::Event> correct_history(const std::vector<uint32_t>& choices);

// A short history with exactly one violation, on lock "planted" by
// processes x1..x3, which no correct history uses.
struct Plant {
  std::string name;                    // e.g. "mutual-exclusion/lost"
  std::string kind;                    // the violation it must produce
  std::vector<history::Event> events;  // index and time_ns are set by interleave()
  std::vector<int64_t> gaps_ns;        // time from the plant's previous event to each one
  std::vector<size_t> evidence;        // which of `events` the violation must name
  std::vector<std::string> processes;  // the processes it must name, in order
};

// Every plant there is.
const std::vector<Plant>& plants();

// Mixes `plant` into `history` by time: the plant starts at a time picked by
// `choices` and keeps its gaps; the history keeps its times. Renumbers the
// result and returns the history indices of the plant's events.
std::vector<int64_t> interleave(std::vector<history::Event>& history, const Plant& plant,
                                const std::vector<uint32_t>& choices);

// Reorders events stamped at the same instant, keeping each process's own
// order (a recorder may list simultaneous events of different processes
// either way), and renumbers them. Returns the new index of each old one.
std::vector<int64_t> shuffle_ties(std::vector<history::Event>& history,
                                  const std::vector<uint32_t>& choices);

// Changes what no checker reads: unknown fields, node, error text, owner,
// client_time_ns.
void add_noise(std::vector<history::Event>& history, const std::vector<uint32_t>& choices);

}  // namespace locklab::testing
