// reentrancy (rule in checkers.h): the depth each process holds each lock
// at, as the history implies it, against the depth the lock reports.
#include "engine.h"
#include "violation_kind.h"

namespace locklab::checkers {
namespace {

const std::string kReentrancyKind(name(ViolationKind::Reentrancy));

class Reentrancy final : public Kind {
 public:
  explicit Reentrancy(Context& context)
      : context_(context), kind_(context.reporter.counter(kReentrancyKind)) {}

  unsigned ops() const override { return bit(Op::Acquire) | bit(Op::Release) | bit(Op::Lost); }

  void on_step(const Step& step) override {
    if (step.lock == kNoLock || step.dead) return;
    if (step.op != Op::Acquire && step.op != Op::Release && step.op != Op::Lost) return;
    Depth& depth = depth_of(step.lock, step.process);
    using history::Type;
    if (step.op == Op::Lost || (step.op == Op::Acquire && step.type == Type::Info) ||
        (step.op == Op::Release && (step.type == Type::Fail || step.type == Type::Info))) {
      depth = Depth{std::nullopt, step.ref};
      return;
    }
    if (step.type != Type::Ok) return;
    const std::optional<int64_t> implied =
        depth.known ? std::optional<int64_t>(*depth.known + (step.op == Op::Acquire ? 1 : -1))
                    : std::nullopt;
    if (step.op == Op::Acquire) {
      const auto reported = step.event.reentry;
      // Depth 1 after an acquire is what a lease that expired meanwhile gives.
      if (implied && reported && *reported != *implied && *reported != 1)
        report(step, depth, *reported, *implied, "acquire", "depth");
      depth = Depth{reported ? reported : implied, step.ref};
      return;
    }
    const auto remaining = step.event.remaining;
    if (depth.known && *depth.known == 0) {
      report_not_held(step, depth);
      depth = Depth{remaining.value_or(0), step.ref};
      return;
    }
    if (implied && remaining && *remaining != *implied)
      report(step, depth, *remaining, *implied, "release", "depth left");
    depth = Depth{remaining ? remaining : implied, step.ref};
  }

 private:
  struct Depth {
    std::optional<int64_t> known = 0;  // nullopt: the history leaves it unknown
    Ref set_by;
  };

  Depth& depth_of(LockId lock, ProcessId process) {
    if (depths_.size() <= size_t(lock)) depths_.resize(size_t(lock) + 1);
    auto& row = depths_[size_t(lock)];
    if (row.size() <= size_t(process)) row.resize(size_t(process) + 1);
    return row[size_t(process)];
  }

  std::string since(const Depth& depth) const {
    return depth.set_by ? " since " + event_text(depth.set_by) : " from the start";
  }

  void report(const Step& step, const Depth& depth, int64_t reported, int64_t implied,
              const char* operation, const char* what) {
    if (!context_.reporter.count(kind_, step.lock)) return;
    Violation v;
    v.kind = kReentrancyKind;
    v.lock = context_.locks[step.lock];
    const std::string& name = context_.processes[step.process];
    v.processes = {name};
    set_events(v, {depth.set_by, step.ref});
    v.explanation = name + "'s " + operation + " of " + v.lock + " at " + event_text(step.ref) +
                    " reported " + what + " " + std::to_string(reported) +
                    " where the history implies " + std::to_string(implied) + " (depth " +
                    std::to_string(*depth.known) + since(depth) + ")";
    context_.reporter.list(std::move(v));
  }

  void report_not_held(const Step& step, const Depth& depth) {
    if (!context_.reporter.count(kind_, step.lock)) return;
    Violation v;
    v.kind = kReentrancyKind;
    v.lock = context_.locks[step.lock];
    const std::string& name = context_.processes[step.process];
    v.processes = {name};
    set_events(v, {depth.set_by, step.invoke, step.ref});
    v.explanation = name + "'s release of " + v.lock + " succeeded at " + event_text(step.ref) +
                    " although " + name + " did not hold it (depth 0" + since(depth) + ")";
    context_.reporter.list(std::move(v));
  }

  Context& context_;
  const Reporter::Counter kind_;
  std::vector<std::vector<Depth>> depths_;  // [lock][process]
};

}  // namespace

std::unique_ptr<Kind> make_reentrancy(Context& context) {
  return std::make_unique<Reentrancy>(context);
}

}  // namespace locklab::checkers
