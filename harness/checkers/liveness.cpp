// liveness (rule in checkers.h). Per lock, while it is "clear" (no hold open,
// no live process that may hold it unknowingly, no release or extend in
// flight), failed acquire attempts
// form a run. A failure joins the run only once every attempt still in
// flight was invoked after it, and time has moved past it: an attempt in
// flight may yet succeed, and then the lock may have been free since that
// attempt's invoke; an attempt invoked at the same instant, recorded before
// or after the failure, may have taken the lock just before it. The run
// is judged when it is interrupted (a hold, an unknown outcome, an extend, a
// crash) or when the history ends: against the faults in force during it
// (the nemesis's start and end events, read as they come), a run longer
// than the limit is availability lost under a fault unless some stretch of
// it with no fault in force is itself longer than the limit.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <limits>

#include "engine.h"
#include "fault_kind.h"
#include "violation_kind.h"

namespace locklab::checkers {
namespace {

const std::string kLivenessKind(name(ViolationKind::Liveness));

class Liveness final : public Kind {
 public:
  explicit Liveness(Context& context)
      : context_(context), kind_(context.reporter.counter(kLivenessKind)) {}

  unsigned ops() const override { return bit(Op::Acquire) | bit(Op::Extend) | bit(Op::Release); }

  void on_step(const Step& step) override {
    if (step.lock == kNoLock || step.dead) return;
    PerLock& lock = per_lock(step.lock);
    using history::Type;
    if (step.op == Op::Acquire) {
      switch (step.type) {
        case Type::Invoke:
          lock.in_flight.push_back({step.process, step.ref});
          if (step.event.ttl_ms) lock.max_ttl_ms = std::max(lock.max_ttl_ms, *step.event.ttl_ms);
          return;
        case Type::Fail:
          remove(lock.in_flight, step.process);
          if (lock.clear) lock.unconfirmed.push_back(Attempt{step.process, step.invoke, step.ref});
          confirm(lock, step.ref.time_ns);
          return;
        case Type::Ok:  // the hold it starts makes the lock busy
          judge(step.lock, lock, step.ref.time_ns);
          remove(lock.in_flight, step.process);
          remove(lock.maybe_holders, step.process);
          return;
        case Type::Info:
          judge(step.lock, lock, step.ref.time_ns);
          remove(lock.in_flight, step.process);
          lock.maybe_holders.push_back(step.process);
          lock.clear = false;
          return;
      }
    }
    if (step.op != Op::Release && step.op != Op::Extend) return;
    // Until a release or extend completes, its key may still be there (or be
    // written again): a live process is at work on the lock.
    if (step.type == Type::Invoke) {
      judge(step.lock, lock, step.ref.time_ns);
      lock.busy.push_back(step.process);
      lock.clear = false;
      return;
    }
    remove(lock.busy, step.process);
    if (step.op == Op::Release && step.type == Type::Ok && !(step.event.remaining > 0))
      remove(lock.maybe_holders, step.process);
    free_if_clear(step.lock, lock, step.ref,
                  step.op == Op::Release ? Freed::Release : Freed::Extend, step.process);
  }

  void on_crash(ProcessId process, Ref crash) override {
    for (size_t id = 0; id < locks_.size(); ++id) {
      PerLock& lock = locks_[id];
      if (!contains(lock.in_flight, process) && !contains(lock.maybe_holders, process) &&
          !contains(lock.busy, process))
        continue;
      // Its key may be in Redis for good: the lock is free of live holders from here.
      judge(LockId(id), lock, crash.time_ns);
      remove(lock.in_flight, process);
      remove(lock.maybe_holders, process);
      remove(lock.busy, process);
      free_if_clear(LockId(id), lock, crash, Freed::Crash, process);
    }
  }

  bool wants_holds() const override { return true; }
  bool wants_faults() const override { return true; }

  void on_fault(const history::EventView& e, Ref ref) override {
    using Phase = history::EventView::Phase;
    // A crash-client is over once done (FORMAT.md): its process is dead, the
    // lock is not hindered by it.
    if (e.phase == Phase::Start && !e.moment && e.f != locklab::name(FaultKind::CrashClient)) {
      windows_.push_back({std::string(e.f), e.fault, ref, Ref{}});
    } else if (e.phase == Phase::End) {
      // The end of the earliest window still open of the same fault (its
      // index, or its kind when the history gives none).
      for (Window& w : windows_)
        if (!w.end && (e.fault ? w.fault == e.fault : w.f == e.f)) {
          w.end = ref;
          break;
        }
    }
  }

  void on_hold_start(const Hold& hold) override {
    PerLock& lock = per_lock(hold.lock);
    judge(hold.lock, lock, hold.start.time_ns);
    lock.clear = false;
  }

  void on_hold_end(const Hold& hold, Ref end, HoldEnd how) override {
    if (how == HoldEnd::EndOfHistory) return;
    const Freed freed = how == HoldEnd::Release ? Freed::Release
                        : how == HoldEnd::Lost  ? Freed::Lost
                                                : Freed::Crash;
    free_if_clear(hold.lock, per_lock(hold.lock), end, freed, hold.process);
  }

  void finish(const Replay&) override {
    for (size_t id = 0; id < locks_.size(); ++id)
      judge(LockId(id), locks_[id], std::numeric_limits<int64_t>::max());
  }

 private:
  enum class Freed { Start, Release, Lost, Crash, Extend };
  struct Attempt {
    ProcessId process;
    Ref invoke;
    Ref failed;
  };
  struct InFlight {
    ProcessId process;
    Ref invoke;
  };
  // A fault in force from `start` to `end` (none: to the end of the history).
  struct Window {
    std::string f;
    std::optional<int64_t> fault;
    Ref start;
    Ref end;
  };
  // A part of a run with no fault in force: from `from` (what freed the lock,
  // the first failed invoke, or a fault's end) to `to` (the last failure, or a
  // fault's start).
  struct Quiet {
    Ref from, to;
    bool after_fault = false, before_fault = false;
    int64_t span() const { return to.time_ns - from.time_ns; }
  };
  struct PerLock {
    int64_t max_ttl_ms = 0;
    std::vector<InFlight> in_flight;       // acquires of live processes
    std::vector<ProcessId> maybe_holders;  // live processes whose acquire ended `info`
    std::vector<ProcessId> busy;           // live processes with a release or extend in flight
    bool clear = true;
    Ref freed;  // the event that made it clear; none at the start of the history
    Freed freed_how = Freed::Start;
    ProcessId freed_by = -1;
    // The run: failures confirmed so far, then the ones waiting on attempts in flight.
    int64_t attempts = 0;
    Ref first_invoke;
    Ref last_failure;
    std::vector<ProcessId> failing;
    std::deque<Attempt> unconfirmed;
  };

  PerLock& per_lock(LockId lock) {
    if (locks_.size() <= size_t(lock)) locks_.resize(size_t(lock) + 1);
    return locks_[size_t(lock)];
  }

  template <class T>
  static bool contains(const std::vector<T>& items, ProcessId process) {
    return std::any_of(items.begin(), items.end(), [&](const T& t) { return id(t) == process; });
  }
  template <class T>
  static bool remove(std::vector<T>& items, ProcessId process) {
    auto it =
        std::find_if(items.begin(), items.end(), [&](const T& t) { return id(t) == process; });
    if (it == items.end()) return false;
    items.erase(it);
    return true;
  }
  static ProcessId id(ProcessId p) { return p; }
  static ProcessId id(const InFlight& f) { return f.process; }

  void free_if_clear(LockId id, PerLock& lock, Ref freed, Freed how, ProcessId by) {
    if (context_.open_holds(id) == 0 && lock.maybe_holders.empty() && lock.busy.empty())
      start_run(lock, freed, how, by);
  }

  static void start_run(PerLock& lock, Ref freed, Freed how, ProcessId by) {
    lock.clear = true;
    lock.freed = freed;
    lock.freed_how = how;
    lock.freed_by = by;
    lock.attempts = 0;
    lock.first_invoke = lock.last_failure = Ref{};
    lock.failing.clear();
    lock.unconfirmed.clear();
  }

  // Moves into the run the failures no attempt can contradict any more:
  // those before every attempt in flight was invoked, and before `now_ns`
  // (the time of the event being read: an invoke at a failure's instant may
  // be recorded after it).
  static void confirm(PerLock& lock, int64_t now_ns) {
    int64_t earliest_in_flight = now_ns;
    for (const auto& f : lock.in_flight)
      earliest_in_flight = std::min(earliest_in_flight, f.invoke.time_ns);
    while (!lock.unconfirmed.empty() &&
           lock.unconfirmed.front().failed.time_ns < earliest_in_flight) {
      const Attempt& a = lock.unconfirmed.front();
      ++lock.attempts;
      if (!lock.first_invoke || a.invoke.time_ns < lock.first_invoke.time_ns)
        lock.first_invoke = a.invoke;
      lock.last_failure = a.failed;
      if (!contains(lock.failing, a.process)) lock.failing.push_back(a.process);
      lock.unconfirmed.pop_front();
    }
  }

  // Judges the run so far, with the failures confirmed by `now_ns`, and ends it.
  void judge(LockId id, PerLock& lock, int64_t now_ns) {
    confirm(lock, now_ns);
    if (lock.clear && lock.attempts > 0 && lock.max_ttl_ms > 0) {
      const bool freed_later = lock.freed && lock.freed.time_ns > lock.first_invoke.time_ns;
      const Ref from = freed_later ? lock.freed : lock.first_invoke;
      const double limit_ns = context_.options.liveness_factor * double(lock.max_ttl_ms) * 1e6;
      if (double(lock.last_failure.time_ns - from.time_ns) > limit_ns) {
        std::vector<const Window*> in_force;
        const Quiet quiet = longest_quiet(from, lock.last_failure, in_force);
        if (double(quiet.span()) > limit_ns) {
          if (context_.reporter.count(kind_, id)) report(id, lock, quiet);
        } else {
          report_unavailable(id, lock, from, in_force);
        }
      }
    }
    lock.attempts = 0;
    lock.first_invoke = lock.last_failure = Ref{};
    lock.failing.clear();
    lock.unconfirmed.clear();
  }

  // The longest part of [from, to] with no fault in force; `in_force` gets
  // the windows that overlap [from, to].
  Quiet longest_quiet(Ref from, Ref to, std::vector<const Window*>& in_force) const {
    for (const Window& w : windows_)
      if (w.start.time_ns <= to.time_ns && (!w.end || w.end.time_ns >= from.time_ns))
        in_force.push_back(&w);
    // Windows are in start order; walk them, keeping the start of the quiet part.
    Quiet best{from, from}, current{from, to};
    for (const Window* w : in_force) {
      if (w->start.time_ns > current.from.time_ns) {
        Quiet before{current.from, w->start, current.after_fault, true};
        if (before.span() > best.span()) best = before;
      }
      if (!w->end) return best;  // in force to the end: nothing quiet after it
      if (w->end.time_ns > current.from.time_ns) current = {w->end, to, true, false};
    }
    if (current.span() > best.span()) best = current;
    return best;
  }

  void report(LockId id, const PerLock& lock, const Quiet& quiet) {
    Violation v;
    v.kind = kLivenessKind;
    v.lock = context_.locks[id];
    const std::string failing = failing_processes(lock, v.processes);
    set_events(v, {lock.freed, lock.first_invoke, lock.last_failure,
                   quiet.after_fault ? quiet.from : Ref{}, quiet.before_fault ? quiet.to : Ref{}});
    char numbers[128];
    std::snprintf(numbers, sizeof numbers, "%.1f ms, more than %g x its %lld ms TTL,",
                  double(quiet.span()) / 1e6, context_.options.liveness_factor,
                  static_cast<long long>(lock.max_ttl_ms));
    std::string when;
    if (quiet.after_fault)
      when += " after every fault had ended (the last at " + event_text(quiet.from) + ")";
    if (quiet.before_fault)
      when += std::string(quiet.after_fault ? " and" : "") + " before a fault began at " +
              event_text(quiet.to);
    v.explanation = v.lock + " stayed unavailable for " + numbers + when +
                    " while no live process held it: all " + std::to_string(lock.attempts) +
                    " acquire attempts by " + failing + " failed from " +
                    event_text(lock.first_invoke) + " to " + event_text(lock.last_failure) + ", " +
                    freed_text(lock);
    context_.reporter.list(std::move(v));
  }

  void report_unavailable(LockId id, const PerLock& lock, Ref from,
                          const std::vector<const Window*>& in_force) {
    Unavailability u;
    u.lock = context_.locks[id];
    for (const Window* w : in_force)
      if (std::find(u.faults.begin(), u.faults.end(), w->f) == u.faults.end())
        u.faults.push_back(w->f);
    u.from_ns = from.time_ns;
    u.to_ns = lock.last_failure.time_ns;
    Violation events;  // set_events orders and pairs them
    set_events(events, {lock.freed, lock.first_invoke, lock.last_failure});
    u.events = events.events;
    u.times_ns = events.times_ns;
    std::vector<std::string> processes;
    const std::string failing = failing_processes(lock, processes);
    std::string faults;
    for (const auto& f : u.faults) faults += (faults.empty() ? "" : ", ") + f;
    char numbers[64];
    std::snprintf(numbers, sizeof numbers, "%.1f ms", double(u.to_ns - u.from_ns) / 1e6);
    u.explanation = u.lock + " could not be taken for " + numbers + " while " + faults +
                    " was in force: all " + std::to_string(lock.attempts) +
                    " acquire attempts by " + failing + " failed from " +
                    event_text(lock.first_invoke) + " to " + event_text(lock.last_failure) + ", " +
                    freed_text(lock);
    context_.reporter.list(id, std::move(u));
  }

  // "c1, c2": the processes whose attempts failed; `processes` gets the one
  // that freed the lock, then them.
  std::string failing_processes(const PerLock& lock, std::vector<std::string>& processes) const {
    if (lock.freed_by >= 0) processes.push_back(context_.processes[lock.freed_by]);
    std::string failing;
    for (ProcessId p : lock.failing) {
      const std::string& name = context_.processes[p];
      if (std::find(processes.begin(), processes.end(), name) == processes.end())
        processes.push_back(name);
      failing += (failing.empty() ? "" : ", ") + name;
    }
    return failing;
  }

  std::string freed_text(const PerLock& lock) const {
    const std::string by = lock.freed_by >= 0 ? context_.processes[lock.freed_by] : "";
    switch (lock.freed_how) {
      case Freed::Start:
        return "and nobody held it since the start of the history";
      case Freed::Release:
        return "after " + by + " released it at " + event_text(lock.freed);
      case Freed::Lost:
        return "after " + by + " reported it lost at " + event_text(lock.freed);
      case Freed::Crash:
        return "after " + by + " crashed at " + event_text(lock.freed);
      case Freed::Extend:
        return "after " + by + "'s extend ended at " + event_text(lock.freed);
    }
    return "";
  }

  Context& context_;
  const Reporter::Counter kind_;
  std::vector<PerLock> locks_;
  std::vector<Window> windows_;  // faults in force at some time, in start order (moments aside)
};

}  // namespace

std::unique_ptr<Kind> make_liveness(Context& context) {
  return std::make_unique<Liveness>(context);
}

}  // namespace locklab::checkers
