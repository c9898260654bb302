// The lease of every hold and what its holder did under it, as the history
// bounds them (checkers.h, "overlap classes"): the mutual-exclusion checker
// reads them to tell a broken lease from an overrun. Internal to checkers/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine.h"

namespace locklab::checkers {

constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

// One hold's lease, in the history's time_ns.
struct LeaseBounds {
  bool known = false;       // a ttl_ms or validity_ms gave it a length
  bool unbounded = false;   // renewed without a record, or extended by an unknown ttl: no `hi`
  const char* source = "";  // "validity" or "ttl"
  int64_t length_ns = 0;    // of the acquire's lease: the unit of "in leases"
  int64_t lo = 0;           // its end, counting what surely happened
  int64_t hi = 0;           // its end, counting what may have happened too
  int64_t in_flight_end = kNever;     // an extend in flight may move the end this far
  std::optional<int64_t> client_end;  // its end by the holder's own clock

  int64_t upper() const { return std::max(hi, in_flight_end); }
  bool bounded_above() const { return known && !unbounded; }
};

// What the holder of an open hold did.
struct HolderActs {
  Ref last_act;                            // its last write invoke, release invoke or lost
  std::optional<int64_t> last_act_client;  // its clock then
  int64_t accepted = 0, rejected = 0;      // writes completed under the hold
  bool write_in_flight = false;
};

// The state of one process on one lock.
struct Holder {
  bool open = false;  // holds the lock (engine's hold)
  LeaseBounds lease;
  HolderActs acts;
  Ref grant_from;  // the earliest its latest grant could have happened
  Ref acquire_ok;  // its latest acquire ok
};

// Follows every acquire, extend, renewal, write, release and lost, and keeps
// the lease and the acts of each (lock, process).
class Leases {
 public:
  static constexpr unsigned kOps = bit(Op::Acquire) | bit(Op::Extend) | bit(Op::Renewed) |
                                   bit(Op::Write) | bit(Op::Release) | bit(Op::Lost);

  // Call for every step of kOps, before the engine's hold calls for it.
  void on_step(const Step& step);
  void on_hold_start(const Hold& hold) { holder(hold.lock, hold.process).open = true; }
  void on_hold_end(const Hold& hold) { holder(hold.lock, hold.process).open = false; }

  Holder& holder(LockId lock, ProcessId process);

 private:
  struct InFlight {  // the invoke of a process's operation in flight
    std::optional<int64_t> ttl_ms;
    std::optional<int64_t> client_ns;
  };

  void acquired(const Step& step, Holder& h, const InFlight& invoke);
  void extended(const Step& step, Holder& h, const InFlight& invoke);
  void renewed(const Step& step, Holder& h);
  void wrote(const Step& step, Holder& h);

  std::vector<std::vector<Holder>> holders_;  // [lock][process]
  std::vector<InFlight> in_flight_;           // [process]
};

}  // namespace locklab::checkers
