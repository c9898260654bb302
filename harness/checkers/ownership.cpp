// ownership (rule in checkers.h): a release that deleted (value.deleted >= 1)
// a key which another process's acquire had replaced since this process
// last wrote it.
#include "best_by_other.h"
#include "engine.h"
#include "violation_kind.h"

namespace locklab::checkers {
namespace {

const std::string kOwnershipKind(name(ViolationKind::Ownership));

class Ownership final : public Kind {
 public:
  explicit Ownership(Context& context)
      : context_(context), kind_(context.reporter.counter(kOwnershipKind)) {}

  unsigned ops() const override { return bit(Op::Acquire) | bit(Op::Extend) | bit(Op::Release); }

  void on_step(const Step& step) override {
    if (step.lock == kNoLock) return;
    PerLock& lock = per_lock(step.lock);
    const bool may_have_written =
        step.type == history::Type::Ok || step.type == history::Type::Info;
    if ((step.op == Op::Acquire || step.op == Op::Extend) && may_have_written) {
      last_write(lock, step.process) = step.ref;
      if (step.op == Op::Acquire && step.type == history::Type::Ok) {
        lock.acquired.add(step.ref.time_ns,
                          Acquired{step.process, step.invoke.time_ns, step.invoke, step.ref});
      }
      return;
    }
    if (step.op != Op::Release) return;
    Pending& pending = pending_for(step.process);
    if (step.type == history::Type::Invoke) {
      pending = Pending{last_write(lock, step.process), std::nullopt};
      const Acquired* newest = lock.acquired.best_before(step.ref.time_ns, step.process);
      if (newest && (!pending.last_write || newest->key > pending.last_write.time_ns))
        pending.replaced_by = *newest;
      return;
    }
    if (step.type == history::Type::Ok && step.event.deleted && *step.event.deleted >= 1 &&
        pending.replaced_by && context_.reporter.count(kind_, step.lock)) {
      const Acquired& q = *pending.replaced_by;
      Violation v;
      v.kind = kOwnershipKind;
      v.lock = context_.locks[step.lock];
      const std::string& p_name = context_.processes[step.process];
      const std::string& q_name = context_.processes[q.process];
      v.processes = {p_name, q_name};
      set_events(v, {pending.last_write, q.invoke, q.acquire, step.invoke, step.ref});
      const std::string since = pending.last_write ? "after " + p_name + " last wrote it at " +
                                                         event_text(pending.last_write)
                                                   : p_name + " never held it";
      v.explanation = p_name + "'s release of " + v.lock + " at " + event_text(step.ref) +
                      " deleted a key that was not its own: " + q_name + " had acquired " + v.lock +
                      " at " + event_text(q.acquire) + " (invoked at " + event_text(q.invoke) +
                      ", " + since + ")";
      context_.reporter.list(std::move(v));
    }
  }

 private:
  struct Acquired {
    ProcessId process;
    int64_t key;  // time_ns of the acquire's invoke
    Ref invoke;
    Ref acquire;
  };
  struct Pending {
    Ref last_write;
    std::optional<Acquired> replaced_by;
  };
  struct PerLock {
    BestByOther<Acquired> acquired;
    std::vector<Ref> last_write;  // by process: latest acquire/extend that did not fail
  };

  PerLock& per_lock(LockId lock) {
    if (locks_.size() <= size_t(lock)) locks_.resize(size_t(lock) + 1);
    return locks_[size_t(lock)];
  }
  static Ref& last_write(PerLock& lock, ProcessId process) {
    if (lock.last_write.size() <= size_t(process)) lock.last_write.resize(size_t(process) + 1);
    return lock.last_write[size_t(process)];
  }
  Pending& pending_for(ProcessId process) {
    if (pending_.size() <= size_t(process)) pending_.resize(size_t(process) + 1);
    return pending_[size_t(process)];
  }

  Context& context_;
  const Reporter::Counter kind_;
  std::vector<PerLock> locks_;
  std::vector<Pending> pending_;  // by process: its release in flight
};

}  // namespace

std::unique_ptr<Kind> make_ownership(Context& context) {
  return std::make_unique<Ownership>(context);
}

}  // namespace locklab::checkers
