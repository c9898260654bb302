// token-order (rule in checkers.h): compares each token with the largest one
// another process obtained before this acquire was invoked.
#include "best_by_other.h"
#include "engine.h"
#include "violation_kind.h"

namespace locklab::checkers {
namespace {

const std::string kTokenOrderKind(name(ViolationKind::TokenOrder));

class TokenOrder final : public Kind {
 public:
  explicit TokenOrder(Context& context)
      : context_(context), kind_(context.reporter.counter(kTokenOrderKind)) {}

  unsigned ops() const override { return bit(Op::Acquire); }

  void on_step(const Step& step) override {
    if (step.op != Op::Acquire || step.lock == kNoLock) return;
    PerLock& lock = per_lock(step.lock);
    std::optional<Token>& earlier = earlier_for(step.process);
    if (step.type == history::Type::Invoke) {
      const Token* best = lock.tokens.best_before(step.ref.time_ns, step.process);
      earlier = best ? std::optional<Token>(*best) : std::nullopt;
      return;
    }
    if (step.type != history::Type::Ok || !step.event.token) return;
    const int64_t token = *step.event.token;
    if (earlier && earlier->key >= token && context_.reporter.count(kind_, step.lock)) {
      Violation v;
      v.kind = kTokenOrderKind;
      v.lock = context_.locks[step.lock];
      const std::string& later_name = context_.processes[step.process];
      const std::string& earlier_name = context_.processes[earlier->process];
      v.processes = {earlier_name, later_name};
      set_events(v, {earlier->acquire, step.invoke, step.ref});
      v.explanation = later_name + " acquired " + v.lock + " with token " + std::to_string(token) +
                      " at " + event_text(step.ref) + " (invoked at " + event_text(step.invoke) +
                      "), but " + earlier_name + " had already obtained token " +
                      std::to_string(earlier->key) + " at " + event_text(earlier->acquire);
      context_.reporter.list(std::move(v));
    }
    lock.tokens.add(step.ref.time_ns, Token{step.process, token, step.ref});
  }

 private:
  struct Token {
    ProcessId process;
    int64_t key;  // the token
    Ref acquire;
  };
  struct PerLock {
    BestByOther<Token> tokens;
  };

  PerLock& per_lock(LockId lock) {
    if (locks_.size() <= size_t(lock)) locks_.resize(size_t(lock) + 1);
    return locks_[size_t(lock)];
  }
  std::optional<Token>& earlier_for(ProcessId process) {
    if (earlier_.size() <= size_t(process)) earlier_.resize(size_t(process) + 1);
    return earlier_[size_t(process)];
  }

  Context& context_;
  const Reporter::Counter kind_;
  std::vector<PerLock> locks_;
  std::vector<std::optional<Token>> earlier_;  // by process: the best token when its acquire began
};

}  // namespace

std::unique_ptr<Kind> make_token_order(Context& context) {
  return std::make_unique<TokenOrder>(context);
}

}  // namespace locklab::checkers
