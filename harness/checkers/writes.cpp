// The protected counter behind each lock: lost-update and stale-write (rules
// in checkers.h), and the writes fencing rejected ("fencing-saved").
//
// lost-update needs every value read so far: they are kept as ranges (O(1)
// memory for a counter that moves forward), and the writes that read the
// most recent values are remembered in a small table. When the earlier write
// of a violation fell out of that table, finish() finds it again by reading
// the history once more.
#include <unordered_map>

#include "best_by_other.h"
#include "engine.h"
#include "interval_set.h"
#include "violation_kind.h"

namespace locklab::checkers {
namespace {

const std::string kLostUpdate(name(ViolationKind::LostUpdate));
const std::string kStaleWrite(name(ViolationKind::StaleWrite));

class Writes final : public Kind {
 public:
  explicit Writes(Context& context)
      : context_(context),
        lost_update_(context.reporter.counter(kLostUpdate)),
        stale_write_(context.reporter.counter(kStaleWrite)),
        writes_accepted_(context.reporter.counter("writes-accepted")),
        fencing_saved_(context.reporter.counter("fencing-saved")) {}

  unsigned ops() const override { return bit(Op::Write); }

  void on_step(const Step& step) override {
    if (step.op != Op::Write || step.lock == kNoLock) return;
    PerLock& lock = per_lock(step.lock);
    Pending& pending = pending_for(step.process);
    switch (step.type) {
      case history::Type::Invoke: {
        // Was this process's hold overtaken by someone who already wrote?
        pending = Pending{context_.latest_acquire(step.lock, step.process), std::nullopt};
        if (!pending.acquire) return;
        const Accepted* best = lock.accepted.best_before(step.ref.time_ns, step.process);
        if (best && best->key > pending.acquire.time_ns) pending.overtaken = *best;
        return;
      }
      case history::Type::Ok:
        context_.reporter.add(writes_accepted_, step.lock);
        if (pending.overtaken) report_stale(step, pending);
        if (step.event.read) check_read(step, lock, *step.event.read);
        if (pending.acquire) {
          lock.accepted.add(step.ref.time_ns, Accepted{step.process, pending.acquire.time_ns,
                                                       pending.acquire, step.ref});
        }
        return;
      case history::Type::Fail:
        context_.reporter.add(fencing_saved_, step.lock);
        return;
      case history::Type::Info:
        return;
    }
  }

  void finish(const Replay& replay) override {
    if (missing_.empty() || !replay) return;
    replay([this](const history::EventView& e) {
      if (e.f != "write" || e.type != history::Type::Ok || !e.lock || !e.read) return;
      for (Missing& m : missing_) {
        if (e.index < m.before && *e.read == m.read && *e.lock == m.lock) {
          m.earlier = Ref{e.index, e.time_ns};
          m.process = std::string(e.process);
        }
      }
    });
    for (const Missing& m : missing_) {
      if (!m.earlier) continue;
      Violation& v = context_.reporter.amend(m.listed);
      const Ref later{v.events[0], v.times_ns[0]};
      v.processes.insert(v.processes.begin(), m.process);
      set_events(v, {m.earlier, later});
      v.explanation = lost_update_text(v.processes[1], v.lock, later, m.read, m.process, m.earlier);
    }
  }

 private:
  // An accepted write, as evidence that a hold was overtaken.
  struct Accepted {
    ProcessId process;
    int64_t key;  // time_ns of the writer's latest acquire
    Ref acquire;
    Ref write;
  };
  struct Pending {
    Ref acquire;  // the writer's latest acquire ok when it invoked the write
    std::optional<Accepted> overtaken;
  };
  struct RecentRead {
    int64_t read = 0;
    Ref write;
    ProcessId process = -1;
  };
  struct PerLock {
    BestByOther<Accepted> accepted;
    IntervalSet reads;
    std::vector<RecentRead> recent;  // by read value modulo its size
  };
  struct Missing {  // a listed lost-update whose earlier write is not in the table
    size_t listed;
    std::string lock;
    int64_t read;
    int64_t before;
    Ref earlier;
    std::string process;
  };

  static constexpr size_t kRecentReads = 1024;

  PerLock& per_lock(LockId lock) {
    if (locks_.size() <= size_t(lock)) locks_.resize(size_t(lock) + 1);
    return locks_[size_t(lock)];
  }
  Pending& pending_for(ProcessId process) {
    if (pending_.size() <= size_t(process)) pending_.resize(size_t(process) + 1);
    return pending_[size_t(process)];
  }

  void report_stale(const Step& step, const Pending& pending) {
    if (!context_.reporter.count(stale_write_, step.lock)) return;
    const Accepted& q = *pending.overtaken;
    Violation v;
    v.kind = kStaleWrite;
    v.lock = context_.locks[step.lock];
    const std::string& p_name = context_.processes[step.process];
    const std::string& q_name = context_.processes[q.process];
    v.processes = {p_name, q_name};
    set_events(v, {pending.acquire, q.acquire, q.write, step.invoke, step.ref});
    v.explanation = p_name + "'s write to " + v.lock + " was accepted at " + event_text(step.ref) +
                    " although " + q_name + " acquired " + v.lock + " at " + event_text(q.acquire) +
                    ", after " + p_name + "'s acquire at " + event_text(pending.acquire) +
                    ", and " + q_name + "'s write was accepted at " + event_text(q.write) +
                    ", before " + p_name + "'s write was invoked at " + event_text(step.invoke);
    context_.reporter.list(std::move(v));
  }

  void check_read(const Step& step, PerLock& lock, int64_t read) {
    if (lock.recent.empty()) lock.recent.resize(kRecentReads);
    RecentRead& recent = lock.recent[uint64_t(read) % kRecentReads];
    if (lock.reads.contains(read) && context_.reporter.count(lost_update_, step.lock)) {
      Violation v;
      v.kind = kLostUpdate;
      v.lock = context_.locks[step.lock];
      const std::string& writer = context_.processes[step.process];
      if (recent.process >= 0 && recent.read == read) {
        const std::string& earlier = context_.processes[recent.process];
        v.processes = {earlier, writer};
        set_events(v, {recent.write, step.ref});
        v.explanation = lost_update_text(writer, v.lock, step.ref, read, earlier, recent.write);
        context_.reporter.list(std::move(v));
      } else {
        v.processes = {writer};
        set_events(v, {step.ref});
        v.explanation = writer + "'s accepted write at " + event_text(step.ref) + " read " +
                        std::to_string(read) + ", which an earlier accepted write had already read";
        missing_.push_back(Missing{context_.reporter.list(std::move(v)), context_.locks[step.lock],
                                   read, step.ref.index, Ref{}, ""});
      }
    }
    lock.reads.insert(read);
    recent = RecentRead{read, step.ref, step.process};
  }

  static std::string lost_update_text(const std::string& writer, const std::string& lock, Ref write,
                                      int64_t read, const std::string& earlier, Ref earlier_write) {
    return writer + "'s write to " + lock + " accepted at " + event_text(write) + " read " +
           std::to_string(read) + ", the value " + earlier + "'s write accepted at " +
           event_text(earlier_write) + " had already read: one of the two updates was lost";
  }

  Context& context_;
  const Reporter::Counter lost_update_, stale_write_, writes_accepted_, fencing_saved_;
  std::vector<PerLock> locks_;
  std::vector<Pending> pending_;  // by process: the write in flight
  std::vector<Missing> missing_;
};

}  // namespace

std::unique_ptr<Kind> make_writes(Context& context) {
  return std::make_unique<Writes>(context);
}

}  // namespace locklab::checkers
