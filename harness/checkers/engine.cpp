#include "engine.h"

#include <algorithm>

#include "fault_kind.h"

namespace locklab::checkers {

using history::HistoryError;
using history::Type;

namespace {

void set_sorted(std::vector<int64_t>& events, std::vector<int64_t>& times_ns,
                std::initializer_list<Ref> refs) {
  std::vector<Ref> sorted;
  for (Ref ref : refs)
    if (ref) sorted.push_back(ref);
  std::sort(sorted.begin(), sorted.end(), [](Ref a, Ref b) { return a.index < b.index; });
  events.clear();
  times_ns.clear();
  for (Ref ref : sorted) {
    events.push_back(ref.index);
    times_ns.push_back(ref.time_ns);
  }
}

}  // namespace

void set_events(Violation& v, std::initializer_list<Ref> refs) {
  set_sorted(v.events, v.times_ns, refs);
}

void set_events(Margin& m, std::initializer_list<Ref> refs) {
  set_sorted(m.events, m.times_ns, refs);
}

// --- Reporter ---------------------------------------------------------------

Reporter::Counter Reporter::counter(const std::string& name) {
  for (size_t i = 0; i < counts_.size(); ++i)
    if (counts_[i].name == name) return i;
  counts_.push_back(Count{name});
  return counts_.size() - 1;
}

size_t Reporter::count(Counter kind, LockId lock, int64_t n) {
  add(kind, lock, n);
  Count& c = counts_[kind];
  const size_t room =
      options_.max_listed_per_kind - std::min(c.listed, options_.max_listed_per_kind);
  const size_t listed = std::min(room, size_t(n));
  c.listed += listed;
  return listed;
}

size_t Reporter::list(Violation violation) {
  listed_.push_back(std::move(violation));
  return listed_.size() - 1;
}

void Reporter::list(LockId lock, Unavailability stretch) {
  if (count(counter(kAvailabilityLost), lock)) unavailable_.push_back(std::move(stretch));
}

void Reporter::add(Counter counter, LockId lock, int64_t n) {
  Count& c = counts_[counter];
  c.total += n;
  if (lock == kNoLock) return;
  if (c.per_lock.size() <= size_t(lock)) c.per_lock.resize(size_t(lock) + 1);
  c.per_lock[size_t(lock)] += n;
}

Results Reporter::results(const Names& locks) {
  Results results;
  std::vector<std::string> shown = violation_kind_names();
  for (const char* other : {"fencing-saved", "holds", "writes-accepted", kAvailabilityLost})
    shown.push_back(other);
  for (const auto& name : shown) {
    const Count& c = counts_[counter(name)];
    results.counts[name] = c.total;
    for (size_t lock = 0; lock < locks.size(); ++lock)
      results.per_lock[locks[LockId(lock)]][name] = lock < c.per_lock.size() ? c.per_lock[lock] : 0;
  }
  results.counts["events"] = counts_[counter("events")].total;
  results.harm.lost_updates = results.counts[std::string(name(ViolationKind::LostUpdate))];
  results.harm.stale_writes = results.counts[std::string(name(ViolationKind::StaleWrite))];
  results.harm.rejected_by_fencing = results.counts["fencing-saved"];
  for (const auto& row : overlap_classes())
    results.harm.overlaps[std::string(row.name)] = counts_[counter(std::string(row.name))].total;
  results.harm.overlaps[std::string(kStoppedByFencing)] =
      counts_[counter(std::string(kStoppedByFencing))].total;
  results.closest_call = std::move(closest_call_);
  results.violations = std::move(listed_);
  results.unavailable = std::move(unavailable_);
  std::stable_sort(results.violations.begin(), results.violations.end(),
                   [](const Violation& a, const Violation& b) {
                     return std::tie(a.events, a.kind) < std::tie(b.events, b.kind);
                   });
  return results;
}

// --- Engine -------------------------------------------------------------------

namespace {

Op classify(std::string_view f) {
  switch (f.size()) {
    case 4:
      return f == "lost" ? Op::Lost : Op::Other;
    case 5:
      return f == "write" ? Op::Write : Op::Other;
    case 6:
      return f == "extend" ? Op::Extend : Op::Other;
    case 7:
      return f == "acquire"   ? Op::Acquire
             : f == "release" ? Op::Release
             : f == "renewed" ? Op::Renewed
                              : Op::Other;
    case 8:
      return f == "incident" ? Op::Incident : Op::Other;
    default:
      return Op::Other;
  }
}

}  // namespace

std::vector<std::unique_ptr<Kind>> Engine::every_kind(Context& context) {
  std::vector<std::unique_ptr<Kind>> kinds;
  kinds.push_back(make_mutual_exclusion(context));
  kinds.push_back(make_writes(context));
  kinds.push_back(make_token_order(context));
  kinds.push_back(make_ownership(context));
  kinds.push_back(make_liveness(context));
  kinds.push_back(make_reentrancy(context));
  return kinds;
}

Engine::Engine(const Options& options, std::function<std::string(int64_t)> where,
               const MakeKinds& make_kinds, bool lenient)
    : options_(options),
      where_(std::move(where)),
      lenient_(lenient),
      reporter_(options_),
      context_{options_,
               processes_,
               locks_,
               reporter_,
               [this](LockId lock, ProcessId process) {
                 if (size_t(lock) >= holdings_.size() ||
                     size_t(process) >= holdings_[size_t(lock)].size())
                   return Ref{};
                 return holdings_[size_t(lock)][size_t(process)].latest_acquire;
               },
               [this](LockId lock) {
                 return size_t(lock) < open_holds_.size() ? open_holds_[size_t(lock)] : 0;
               }} {
  holds_ = reporter_.counter("holds");
  kinds_ = make_kinds(context_);
  for (auto& kind : kinds_) {
    for (unsigned op = 0; op < kOps; ++op)
      if (kind->ops() & (1u << op)) by_op_[op].push_back(kind.get());
    if (kind->wants_time()) time_kinds_.push_back(kind.get());
    if (kind->wants_holds()) hold_kinds_.push_back(kind.get());
    if (kind->wants_faults()) fault_kinds_.push_back(kind.get());
  }
}

Engine::~Engine() = default;

Engine::Holding& Engine::holding(LockId lock, ProcessId process) {
  if (holdings_.size() <= size_t(lock)) {
    holdings_.resize(size_t(lock) + 1);
    open_holds_.resize(size_t(lock) + 1);
  }
  auto& row = holdings_[size_t(lock)];
  if (row.size() <= size_t(process)) row.resize(size_t(process) + 1);
  return row[size_t(process)];
}

void Engine::observe(const history::EventView& e) {
  ++events_;
  const Ref ref{e.index, e.time_ns};
  if (e.time_ns > time_ns_) {
    time_ns_ = e.time_ns;
    for (Kind* kind : time_kinds_) kind->on_time(e.time_ns);
  }
  if (e.is_nemesis()) {
    for (Kind* kind : fault_kinds_) kind->on_fault(e, ref);
    if (e.f == locklab::name(FaultKind::CrashClient))
      for (auto target : e.targets) crash(processes_.intern(target), ref);
    return;
  }

  const ProcessId process = processes_.intern(e.process);
  if (process_states_.size() <= size_t(process)) process_states_.resize(size_t(process) + 1);
  ProcessState& state = process_states_[size_t(process)];
  const Op op = classify(e.f);
  // Known operations are told apart by Op; others by their interned name.
  const int32_t f = op == Op::Other ? int32_t(unsigned(Op::Other)) + fs_.intern(e.f) : int32_t(op);
  Step step{e,  ref,    process, e.lock ? locks_.intern(*e.lock) : kNoLock,
            op, e.type, Ref{},   state.dead};

  // Pairing: a process has at most one operation in flight; `lost`,
  // `renewed` (its watchdog's) and `incident` (its library's) are single events.
  if (step.op == Op::Lost || step.op == Op::Renewed || step.op == Op::Incident) {
  } else if (e.type == Type::Invoke) {
    if (state.in_flight.f >= 0 && !lenient_) {
      structure_error(step, "invoked " + std::string(e.f) + " while its " +
                                f_name(state.in_flight.f) + " invoked at event " +
                                std::to_string(state.in_flight.invoke.index) +
                                " has not completed");
    }
    state.in_flight = {f, step.lock, ref};
  } else if (state.in_flight.f == f &&
             (step.lock == kNoLock || step.lock == state.in_flight.lock)) {
    step.lock = state.in_flight.lock;
    step.invoke = state.in_flight.invoke;
    state.in_flight = {};
  } else if (!lenient_) {
    if (state.in_flight.f < 0) {
      structure_error(step, "completed " + std::string(e.f) + " without invoking it");
    }
    if (state.in_flight.f != f) {
      structure_error(step, "completed " + std::string(e.f) + " but its open operation is " +
                                f_name(state.in_flight.f) + " (invoked at event " +
                                std::to_string(state.in_flight.invoke.index) + ")");
    }
    structure_error(step, "completed " + std::string(e.f) + " on lock \"" + locks_[step.lock] +
                              "\" but invoked it at event " +
                              std::to_string(state.in_flight.invoke.index) + " on another lock");
  }

  for (Kind* kind : by_op_[unsigned(step.op)]) kind->on_step(step);
  if (step.lock == kNoLock) return;

  // Holds (FORMAT.md): re-entrant acquires nest; a dead process holds nothing.
  Holding& held = holding(step.lock, process);
  if (step.op == Op::Acquire && e.type == Type::Ok) {
    held.latest_acquire = ref;
    if (step.dead) return;
    if (held.depth++ == 0) {
      held.start = ref;
      ++open_holds_[size_t(step.lock)];
      reporter_.add(holds_, step.lock);
      for (Kind* kind : hold_kinds_) kind->on_hold_start(Hold{step.lock, process, ref});
    }
  } else if (step.op == Op::Release && e.type == Type::Invoke && held.depth > 0) {
    if (--held.depth == 0) end_hold(step.lock, process, ref, HoldEnd::Release);
  } else if (step.op == Op::Lost && held.depth > 0) {
    held.depth = 0;
    end_hold(step.lock, process, ref, HoldEnd::Lost);
  }
}

std::string Engine::f_name(int32_t f) const {
  static const char* const kKnown[] = {"acquire", "release", "extend",  "write",
                                       "lost",    "renewed", "incident"};
  return f < int32_t(Op::Other) ? kKnown[f] : fs_[f - int32_t(Op::Other)];
}

void Engine::crash(ProcessId process, Ref ref) {
  if (process_states_.size() <= size_t(process)) process_states_.resize(size_t(process) + 1);
  if (process_states_[size_t(process)].dead) return;
  for (auto& kind : kinds_) kind->on_crash(process, ref);
  // It may still complete the operation it was in: keep that for pairing.
  process_states_[size_t(process)].dead = true;
  for (size_t lock = 0; lock < holdings_.size(); ++lock) {
    auto& row = holdings_[lock];
    if (size_t(process) < row.size() && row[size_t(process)].depth > 0) {
      row[size_t(process)].depth = 0;
      end_hold(LockId(lock), process, ref, HoldEnd::Crash);
    }
  }
}

void Engine::end_hold(LockId lock, ProcessId process, Ref end, HoldEnd how) {
  --open_holds_[size_t(lock)];
  const Hold hold{lock, process, holdings_[size_t(lock)][size_t(process)].start};
  for (Kind* kind : hold_kinds_) kind->on_hold_end(hold, end, how);
}

Results Engine::finish(const Kind::Replay& replay) {
  // Time moves past the last event; then the holds still open end with the history.
  for (auto& kind : kinds_) kind->on_time(std::numeric_limits<int64_t>::max());
  for (size_t lock = 0; lock < holdings_.size(); ++lock) {
    for (size_t process = 0; process < holdings_[lock].size(); ++process) {
      if (holdings_[lock][process].depth > 0) {
        holdings_[lock][process].depth = 0;
        end_hold(LockId(lock), ProcessId(process), Ref{}, HoldEnd::EndOfHistory);
      }
    }
  }
  for (auto& kind : kinds_) kind->finish(replay);
  reporter_.add(reporter_.counter("events"), kNoLock, events_);
  return reporter_.results(locks_);
}

void Engine::structure_error(const Step& step, const std::string& what) {
  std::string message = where_(step.ref.index) + ": " + processes_[step.process] + " " + what;
  // Names come from the history: keep the message on one line.
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  throw HistoryError(message);
}

}  // namespace locklab::checkers
