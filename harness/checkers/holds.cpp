#include "holds.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine.h"

namespace locklab::checkers {

// The one kind a HoldTracker's engine runs: it turns the engine's holds into HoldSpans.
class HoldTracker::Recorder : public Kind {
 public:
  Recorder(Context& context, HoldTracker& tracker) : context_(context), tracker_(tracker) {}

  unsigned ops() const override { return bit(Op::Acquire); }
  bool wants_holds() const override { return true; }

  // The engine calls on_step() for an acquire ok just before the hold it starts, if any.
  void on_step(const Step& step) override {
    if (step.type == history::Type::Ok) token_ = step.event.token;
  }

  void on_hold_start(const Hold& hold) override { tokens_[{hold.lock, hold.process}] = token_; }

  void on_hold_end(const Hold& hold, Ref end, HoldEnd how) override {
    HoldSpan span;
    span.process = context_.processes[hold.process];
    span.lock = context_.locks[hold.lock];
    span.start_index = hold.start.index;
    span.start_ns = hold.start.time_ns;
    auto token = tokens_.find({hold.lock, hold.process});
    if (token != tokens_.end()) {
      span.token = token->second;
      tokens_.erase(token);
    }
    span.end = how;
    span.end_index = end ? end.index : -1;
    span.end_ns = end ? end.time_ns : tracker_.last_ns_;
    tracker_.on_end_(span);
  }

 private:
  Context& context_;
  HoldTracker& tracker_;
  std::optional<int64_t> token_;  // of the latest acquire ok
  std::map<std::pair<LockId, ProcessId>, std::optional<int64_t>> tokens_;  // of each open hold
};

HoldTracker::HoldTracker(std::function<void(const HoldSpan&)> on_end)
    : on_end_(std::move(on_end)),
      engine_(std::make_unique<Engine>(
          Options{}, [](int64_t index) { return "event " + std::to_string(index); },
          [this](Context& context) {
            std::vector<std::unique_ptr<Kind>> kinds;
            kinds.push_back(std::make_unique<Recorder>(context, *this));
            return kinds;
          },
          /*lenient=*/true)) {}

HoldTracker::~HoldTracker() = default;

void HoldTracker::observe(const history::EventView& event) {
  last_ns_ = std::max(last_ns_, event.time_ns);
  engine_->observe(event);
}

void HoldTracker::finish() {
  engine_->finish(Kind::Replay{});
}

}  // namespace locklab::checkers
