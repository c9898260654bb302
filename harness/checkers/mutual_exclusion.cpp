// mutual-exclusion (rule in checkers.h), each overlap told by its class, and
// the closest calls. A hold that starts at time t is compared with the holds
// still open once every event stamped t has been seen, since one of them may
// end at t exactly (holds that touch do not overlap). Holds that start at the
// same t are paired in index order, so each pair counts once. Each pair is
// classified when it is found, from the earlier lease as it stood then; its
// late writes and how far the earlier holder acted past its lease are known
// when the earlier hold ends. Cost: O(open holds) per hold plus the
// violations listed.
#include <cmath>
#include <cstdio>
#include <deque>
#include <list>
#include <string_view>
#include <unordered_map>

#include "engine.h"
#include "leases.h"
#include "violation_kind.h"

namespace locklab::checkers {
namespace {

const std::string kMutualExclusionKind(name(ViolationKind::MutualExclusion));

// "1000.5 ms"
std::string ms_text(double ms) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f ms", ms);
  return text;
}

// " (1.5 leases)", or nothing when the lease's length is unknown.
std::string leases_text(double ms, int64_t length_ns) {
  if (length_ns <= 0) return "";
  char text[48];
  std::snprintf(text, sizeof text, " (%.2f leases)", ms * 1e6 / double(length_ns));
  return text;
}

// "overrun: ", the start of an overlap's sentence.
std::string label(OverlapClass overlap_class) {
  return std::string(info(overlap_class).label) + ": ";
}

double ms_of(int64_t ns) {
  return double(ns) / 1e6;
}

// `ms` in leases of `length_ns`; 0 when the length is unknown.
double in_leases(double ms, int64_t length_ns) {
  return length_ns > 0 ? ms * 1e6 / double(length_ns) : 0;
}

class MutualExclusion final : public Kind {
 public:
  explicit MutualExclusion(Context& context)
      : context_(context),
        kind_(context.reporter.counter(kMutualExclusionKind)),
        stopped_(context.reporter.counter(std::string(kStoppedByFencing))) {
    for (const auto& row : overlap_classes())
      classes_.push_back(context.reporter.counter(std::string(row.name)));
  }

  unsigned ops() const override { return Leases::kOps; }
  bool wants_time() const override { return true; }
  bool wants_holds() const override { return true; }

  void on_step(const Step& step) override {
    leases_.on_step(step);
    if (step.lock == kNoLock) return;
    if (step.op == Op::Write && step.type != history::Type::Invoke) wrote(step);
    if (step.op == Op::Release) released(step);
    if (step.op == Op::Renewed && step.type != history::Type::Fail) renewal_sent_earlier(step);
  }

  void on_hold_start(const Hold& hold) override {
    leases_.on_hold_start(hold);
    PerLock& lock = per_lock(hold.lock);
    lock.open.push_back(Open{hold.process, hold.start, {}});
    if (lock.by_process.size() <= size_t(hold.process))
      lock.by_process.resize(size_t(hold.process) + 1, lock.open.end());
    lock.by_process[size_t(hold.process)] = std::prev(lock.open.end());
    started_.push_back(hold);
    handed_over(hold, lock);
  }

  void on_hold_end(const Hold& hold, Ref end, HoldEnd how) override {
    PerLock& lock = per_lock(hold.lock);
    auto& it = lock.by_process[size_t(hold.process)];
    const Holder& holder = leases_.holder(hold.lock, hold.process);
    for (Group& group : it->groups) settle(group, holder, end, how);
    lock.open.erase(it);
    it = lock.open.end();
    lock.last_ended = Ended{hold.process,
                            holder.lease,
                            holder.acquire_ok,
                            end,
                            how == HoldEnd::Release ? Release::InFlight : Release::None,
                            {}};
    leases_.on_hold_end(hold);
  }

  void on_time(int64_t) override {
    if (!started_.empty()) compare_started();
  }

 private:
  // A listed violation whose figures wait for the end of its earlier hold.
  struct Listed {
    size_t index;
    int64_t lease_end;  // the earlier lease's end (hi) at the later grant
    std::optional<int64_t> client_end;
  };
  // Overlaps of one earlier hold that share their class and the holder's
  // write tally when they began: their late writes are the same.
  struct Group {
    OverlapClass overlap_class;
    int64_t count = 0;
    int64_t accepted = 0, rejected = 0;  // the holder's writes completed before them
    bool write_in_flight = false;        // one more, invoked before them, was still in flight
    std::vector<Listed> listed;
    int64_t last_grant_ok_ns = 0;  // the latest later holder's acquire ok among them
  };
  struct Open {
    ProcessId process;
    Ref start;
    std::vector<Group> groups;  // overlaps in which this is the earlier hold
  };
  enum class Release { None, InFlight, Ok, NotOk };
  // The latest hold of a lock to end, for the closest call.
  struct Ended {
    ProcessId process = -1;
    LeaseBounds lease;
    Ref acquire_ok, end;
    Release release = Release::None;
    std::vector<Margin> pending;  // grants after it, kept unless its release completes ok
  };
  struct PerLock {
    std::list<Open> open;  // in start order
    std::vector<std::list<Open>::iterator> by_process;
    std::optional<Ended> last_ended;
  };

  PerLock& per_lock(LockId lock) {
    if (locks_.size() <= size_t(lock)) locks_.resize(size_t(lock) + 1);
    return locks_[size_t(lock)];
  }

  bool still_open(const Hold& hold) {
    PerLock& lock = per_lock(hold.lock);
    auto it = lock.by_process[size_t(hold.process)];
    return it != lock.open.end() && it->start.index == hold.start.index;
  }

  // Every hold in started_ began at the instant now past; those still open
  // overlap every hold of another process opened before them.
  void compare_started() {
    // Of the holds opened before one, skip those that started at the same
    // instant after it: they are not "before". Count them per lock, backwards.
    std::vector<size_t> later_still_open(started_.size(), 0);
    if (started_.size() > 1) {
      std::unordered_map<LockId, size_t> seen;
      for (size_t i = started_.size(); i-- > 0;) {
        if (!still_open(started_[i])) continue;
        later_still_open[i] = seen[started_[i].lock]++;
      }
    }
    for (size_t i = 0; i < started_.size(); ++i) {
      const Hold& later = started_[i];
      if (!still_open(later)) continue;
      PerLock& lock = per_lock(later.lock);
      const size_t earlier = lock.open.size() - 1 - later_still_open[i];
      if (earlier == 0) continue;
      size_t to_list = context_.reporter.count(kind_, later.lock, int64_t(earlier));
      auto it = lock.open.begin();
      for (size_t n = 0; n < earlier; ++n, ++it) pair(*it, later, n < to_list);
    }
    started_.clear();
  }

  // One overlap: `earlier` was open when `later` started.
  void pair(Open& earlier, const Hold& later, bool list) {
    const Holder& a = leases_.holder(later.lock, earlier.process);
    const Holder& b = leases_.holder(later.lock, later.process);
    Overlap overlap = judge(a, b, later, earlier.process, earlier.start);
    const OverlapClass cls = *overlap_class_named(overlap.overlap_class);
    context_.reporter.add(classes_[size_t(cls)], later.lock);
    Group& group = group_for(earlier, cls, a.acts);
    ++group.count;
    group.last_grant_ok_ns = later.start.time_ns;
    if (!list) return;
    Violation v;
    v.kind = kMutualExclusionKind;
    v.lock = context_.locks[later.lock];
    v.processes = {context_.processes[earlier.process], context_.processes[later.process]};
    v.events = {earlier.start.index, later.start.index};
    v.times_ns = {earlier.start.time_ns, later.start.time_ns};
    v.explanation = v.processes[1] + " acquired " + v.lock + " at event " +
                    std::to_string(later.start.index) + " while " + v.processes[0] +
                    " held it since event " + std::to_string(earlier.start.index);
    v.overlap = std::move(overlap);
    group.listed.push_back(
        Listed{context_.reporter.list(std::move(v)), a.lease.upper(), a.lease.client_end});
  }

  Group& group_for(Open& earlier, OverlapClass cls, const HolderActs& acts) {
    auto& groups = earlier.groups;
    if (groups.empty() || groups.back().overlap_class != cls ||
        groups.back().accepted != acts.accepted || groups.back().rejected != acts.rejected ||
        groups.back().write_in_flight != acts.write_in_flight)
      groups.push_back(Group{cls, 0, acts.accepted, acts.rejected, acts.write_in_flight, {}});
    return groups.back();
  }

  // The class of the overlap of a's hold (which began at `a_ok`, the latest
  // a's grant can have happened) with b's, from a's lease as it stands.
  Overlap judge(const Holder& a, const Holder& b, const Hold& later, ProcessId earlier,
                Ref a_ok) const {
    const std::string& p = context_.processes[earlier];
    const std::string& q = context_.processes[later.process];
    Overlap o;
    o.lease_source = a.lease.source;
    o.lease_ms = a.lease.known ? ms_of(a.lease.length_ns) : 0;
    const Ref ok = later.start;
    if (!a.lease.known) {
      o.overlap_class = name(OverlapClass::Unclassified);
      o.unclassified_because = name(Uncertainty::NoLease);
      o.explanation = label(OverlapClass::Unclassified) + p +
                      "'s acquire gave no ttl_ms or validity_ms, so " + "its lease is unknown";
    } else if (b.grant_from.time_ns < a_ok.time_ns && ok.time_ns < a.lease.lo) {
      // b was still trying when a's acquire answered: the lock may have
      // granted b first (its answer came late), so which lease was broken,
      // if any, the history cannot tell.
      o.overlap_class = name(OverlapClass::Unclassified);
      o.unclassified_because = name(Uncertainty::GrantOrder);
      o.explanation = label(OverlapClass::Unclassified) + q + "'s attempt began at " +
                      ms_text(ms_of(b.grant_from.time_ns)) + ", before " + p +
                      "'s acquire answered at " + ms_text(ms_of(a_ok.time_ns)) +
                      ", so either may have been granted first";
    } else if (ok.time_ns < a.lease.lo) {
      o.overlap_class = name(OverlapClass::BrokenLease);
      o.inside_lease_ms = ms_of(a.lease.lo - ok.time_ns);
      o.explanation = label(OverlapClass::BrokenLease) + q + " was granted the lock at least " +
                      ms_text(*o.inside_lease_ms) +
                      leases_text(*o.inside_lease_ms, a.lease.length_ns) + " before " + p +
                      "'s lease ended at " + ms_text(ms_of(a.lease.lo)) + lease_from_ttl(a);
    } else if (a.lease.bounded_above() && b.grant_from.time_ns >= a.lease.upper()) {
      o.overlap_class = name(OverlapClass::Overrun);
      o.explanation = label(OverlapClass::Overrun) + q + " was granted the lock after " + p +
                      "'s lease ended at " + ms_text(ms_of(a.lease.upper())) + lease_from_ttl(a);
    } else {
      o.overlap_class = name(OverlapClass::Unclassified);
      o.unclassified_because = name(a.lease.bounded_above() ? Uncertainty::GrantWindow
                                                            : Uncertainty::UnrecordedRenewals);
      o.explanation = !a.lease.bounded_above()
                          ? label(OverlapClass::Unclassified) + p +
                                "'s lease was renewed or extended by amounts the " +
                                "history does not record, so when it ended is unknown"
                          : label(OverlapClass::Unclassified) + q + "'s grant came between " +
                                ms_text(ms_of(b.grant_from.time_ns)) + " and " +
                                ms_text(ms_of(ok.time_ns)) + ", and " + p +
                                "'s lease ended in between (" + ms_text(ms_of(a.lease.lo)) + ")";
    }
    return o;
  }

  // A lock that tells its holder no deadline of its own (no validity_ms) is
  // judged by the ttl_ms it was asked for; the reader is told so.
  static std::string lease_from_ttl(const Holder& a) {
    return std::string_view(a.lease.source) == "ttl"
               ? " (its ttl_ms: the lock reported no validity of its own)"
               : "";
  }

  // A renewal of a holder's lease is recorded when its answer came, but Redis
  // may have applied it as early as its sending (sent_ns): one sent before a
  // later holder's acquire answered may have carried the lease past that
  // grant, which its overrun did not count on (answered after the grant, it
  // ends after it too). Such overruns become unclassified (a group whose
  // grants straddle the sending, whole).
  void renewal_sent_earlier(const Step& step) {
    PerLock& lock = per_lock(step.lock);
    if (lock.by_process.size() <= size_t(step.process)) return;
    auto open = lock.by_process[size_t(step.process)];
    if (open == lock.open.end()) return;
    const int64_t sent = step.event.sent_ns.value_or(step.ref.time_ns);
    for (Group& group : open->groups) {
      if (group.overlap_class != OverlapClass::Overrun || sent >= group.last_grant_ok_ns) continue;
      group.overlap_class = OverlapClass::Unclassified;
      context_.reporter.add(classes_[size_t(OverlapClass::Overrun)], step.lock, -group.count);
      context_.reporter.add(classes_[size_t(OverlapClass::Unclassified)], step.lock, group.count);
      for (const Listed& listed : group.listed) {
        Overlap& o = *context_.reporter.amend(listed.index).overlap;
        const auto& v = context_.reporter.amend(listed.index);
        o.overlap_class = name(OverlapClass::Unclassified);
        o.unclassified_because = name(Uncertainty::RenewalInFlight);
        o.explanation = label(OverlapClass::Unclassified) + "a renewal of " + v.processes[0] +
                        "'s lease sent at " + ms_text(ms_of(sent)) + ", before " + v.processes[1] +
                        "'s acquire answered at " + ms_text(ms_of(v.times_ns[1])) +
                        ", was answered only at " + ms_text(ms_of(step.ref.time_ns)) +
                        ", so it may have carried the lease past that grant";
      }
    }
  }

  // The earlier hold ended: the late writes and acts of its overlaps are known.
  void settle(Group& group, const Holder& holder, Ref end, HoldEnd how) {
    const int64_t accepted = holder.acts.accepted - group.accepted;
    const int64_t rejected = holder.acts.rejected - group.rejected;
    if (accepted == 0 && rejected > 0) context_.reporter.add(stopped_, kNoLock, group.count);
    for (const Listed& listed : group.listed) {
      Violation& v = context_.reporter.amend(listed.index);
      Overlap& o = *v.overlap;
      o.late_writes_accepted = accepted;
      o.late_writes_rejected = rejected;
      if (group.overlap_class == OverlapClass::Overrun) overran(o, v, holder, listed);
      if (accepted + rejected > 0) o.explanation += late_writes_text(o, v.processes[0]);
      complete(v, end, how);
    }
  }

  // How far past its lease the overrunning holder acted, and by whose clock.
  static void overran(Overlap& o, const Violation& v, const Holder& holder, const Listed& listed) {
    const Ref act = holder.acts.last_act;
    if (!act || act.time_ns <= listed.lease_end) return;
    o.past_lease_ms = ms_of(act.time_ns - listed.lease_end);
    o.clock_misjudged = listed.client_end && holder.acts.last_act_client &&
                        *holder.acts.last_act_client < *listed.client_end;
    o.explanation += ", and " + v.processes[0] + " acted as its holder " +
                     ms_text(*o.past_lease_ms) +
                     leases_text(*o.past_lease_ms, int64_t(o.lease_ms * 1e6)) + " past it (event " +
                     std::to_string(act.index) + ")";
    if (o.clock_misjudged) o.explanation += "; its clock misjudged the lease";
  }

  static std::string late_writes_text(const Overlap& o, const std::string& holder) {
    if (o.stopped_by_fencing())
      return "; " + std::string(kStoppedByFencingLabel) + ": the store rejected " + holder + "'s " +
             std::to_string(o.late_writes_rejected) + " late write" +
             (o.late_writes_rejected == 1 ? "" : "s");
    return "; the store accepted " + std::to_string(o.late_writes_accepted) + " late write" +
           (o.late_writes_accepted == 1 ? "" : "s") + " of " + holder + "'s and rejected " +
           std::to_string(o.late_writes_rejected);
  }

  static void complete(Violation& v, Ref end, HoldEnd how) {
    const std::string& holder = v.processes[0];
    const std::string at = end ? std::to_string(end.index) : "";
    switch (how) {
      case HoldEnd::Release:
        v.explanation += " (released at event " + at + ")";
        break;
      case HoldEnd::Lost:
        v.explanation += " (until " + holder + " reported it lost at event " + at + ")";
        break;
      case HoldEnd::Crash:
        v.explanation += " (until " + holder + " crashed at event " + at + ")";
        break;
      case HoldEnd::EndOfHistory:
        v.explanation += " (still held at the end of the history)";
        break;
    }
    if (end) {
      v.events.push_back(end.index);
      v.times_ns.push_back(end.time_ns);
    }
  }

  // A write completed: the tallies of overlaps that began while it was in
  // flight take it in (it is not late for them), and an accepted write's
  // distance from its lease's end is a closest call.
  void wrote(const Step& step) {
    PerLock& lock = per_lock(step.lock);
    if (size_t(step.process) < lock.by_process.size() &&
        lock.by_process[size_t(step.process)] != lock.open.end()) {
      auto& groups = lock.by_process[size_t(step.process)]->groups;
      for (auto g = groups.rbegin(); g != groups.rend() && g->write_in_flight; ++g) {
        g->write_in_flight = false;
        g->accepted += step.type == history::Type::Ok;
        g->rejected += step.type == history::Type::Fail;
      }
    }
    const Holder& h = leases_.holder(step.lock, step.process);
    if (step.type != history::Type::Ok || !h.open || !h.lease.bounded_above() || !step.invoke)
      return;
    const double ms = ms_of(h.lease.upper() - step.invoke.time_ns);
    auto& kept = context_.reporter.closest_call().write_before_lease_end;
    if (kept && kept->ms <= ms) return;
    Margin m{ms,
             in_leases(ms, h.lease.length_ns),
             context_.locks[step.lock],
             {context_.processes[step.process]},
             {},
             {},
             ""};
    set_events(m, {h.acquire_ok, step.invoke, step.ref});
    m.explanation = m.processes[0] + "'s write to " + m.lock + " invoked at " +
                    event_text(step.invoke) + " and accepted came " + ms_text(std::abs(ms)) +
                    leases_text(std::abs(ms), h.lease.length_ns) +
                    (ms >= 0 ? " before its lease ended, at most" : " after its lease ended");
    Reporter::keep_closer(kept, std::move(m));
  }

  // A release by the holder that last let go of the lock tells whether it
  // handed the lock over (a release that completed ok) or let it expire.
  void released(const Step& step) {
    auto& ended = per_lock(step.lock).last_ended;
    if (!ended || ended->process != step.process) return;
    if (step.type == history::Type::Invoke) {
      if (ended->release == Release::None) ended->release = Release::InFlight;
      return;
    }
    if (ended->release != Release::InFlight) return;
    ended->release = step.type == history::Type::Ok ? Release::Ok : Release::NotOk;
    if (ended->release == Release::NotOk)
      for (Margin& m : ended->pending)
        Reporter::keep_closer(context_.reporter.closest_call().grant_after_lease, std::move(m));
    ended->pending.clear();
  }

  // A new hold of a lock whose previous holder let it go by expiry: how long
  // after that lease's end it was granted.
  void handed_over(const Hold& hold, PerLock& lock) {
    if (!lock.last_ended || lock.last_ended->process == hold.process) return;
    Ended& a = *lock.last_ended;
    if (!a.lease.known || a.release == Release::Ok) return;
    const double ms = ms_of(hold.start.time_ns - a.lease.lo);
    Margin m{ms,
             in_leases(ms, a.lease.length_ns),
             context_.locks[hold.lock],
             {context_.processes[a.process], context_.processes[hold.process]},
             {},
             {},
             ""};
    set_events(m, {a.acquire_ok, a.end, hold.start});
    m.explanation = m.processes[1] + " was granted " + m.lock + " at " + event_text(hold.start) +
                    ", " + ms_text(std::abs(ms)) + leases_text(std::abs(ms), a.lease.length_ns) +
                    (ms >= 0 ? " after " + m.processes[0] + "'s lease ended, at most"
                             : " before " + m.processes[0] + "'s lease ended");
    if (a.release == Release::InFlight)
      a.pending.push_back(std::move(m));
    else
      Reporter::keep_closer(context_.reporter.closest_call().grant_after_lease, std::move(m));
  }

  Context& context_;
  const Reporter::Counter kind_, stopped_;
  std::vector<Reporter::Counter> classes_;  // by OverlapClass
  Leases leases_;
  // A deque: a lock seen later must not move the earlier ones, whose
  // by_process holds their list's end() (a moved std::list has a new end()).
  std::deque<PerLock> locks_;
  std::vector<Hold> started_;  // holds opened at the current instant
};

}  // namespace

std::unique_ptr<Kind> make_mutual_exclusion(Context& context) {
  return std::make_unique<MutualExclusion>(context);
}

}  // namespace locklab::checkers
