// mutual-exclusion (rule in checkers.h). A hold that starts at time t is
// compared with the holds still open once every event stamped t has been
// seen, since one of them may end at t exactly (holds that touch do not
// overlap). Holds that start at the same t are paired in index order, so
// each pair counts once. Cost: O(1) per event plus the violations listed.
#include <list>
#include <unordered_map>

#include "engine.h"
#include "violation_kind.h"

namespace locklab::checkers {
namespace {

const std::string kKind(name(ViolationKind::MutualExclusion));

class MutualExclusion final : public Kind {
 public:
  explicit MutualExclusion(Context& context)
      : context_(context), kind_(context.reporter.counter(kKind)) {}

  bool wants_time() const override { return true; }

  bool wants_holds() const override { return true; }

  void on_hold_start(const Hold& hold) override {
    PerLock& lock = per_lock(hold.lock);
    lock.open.push_back(Open{hold.process, hold.start, {}});
    if (lock.by_process.size() <= size_t(hold.process))
      lock.by_process.resize(size_t(hold.process) + 1, lock.open.end());
    lock.by_process[size_t(hold.process)] = std::prev(lock.open.end());
    started_.push_back(hold);
  }

  void on_hold_end(const Hold& hold, Ref end, HoldEnd how) override {
    PerLock& lock = per_lock(hold.lock);
    auto& it = lock.by_process[size_t(hold.process)];
    for (size_t listed : it->awaiting_end) complete(context_.reporter.amend(listed), end, how);
    lock.open.erase(it);
    it = lock.open.end();
  }

  void on_time(int64_t) override {
    if (!started_.empty()) compare_started();
  }

 private:
  struct Open {
    ProcessId process;
    Ref start;
    std::vector<size_t> awaiting_end;  // listed violations in which this is the earlier hold
  };
  struct PerLock {
    std::list<Open> open;  // in start order
    std::vector<std::list<Open>::iterator> by_process;
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
      for (auto it = lock.open.begin(); to_list > 0; ++it, --to_list) {
        Violation v;
        v.kind = kKind;
        v.lock = context_.locks[later.lock];
        v.processes = {context_.processes[it->process], context_.processes[later.process]};
        v.events = {it->start.index, later.start.index};
        v.times_ns = {it->start.time_ns, later.start.time_ns};
        v.explanation = v.processes[1] + " acquired " + v.lock + " at event " +
                        std::to_string(later.start.index) + " while " + v.processes[0] +
                        " held it since event " + std::to_string(it->start.index);
        it->awaiting_end.push_back(context_.reporter.list(std::move(v)));
      }
    }
    started_.clear();
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

  Context& context_;
  const Reporter::Counter kind_;
  std::vector<PerLock> locks_;
  std::vector<Hold> started_;  // holds opened at the current instant
};

}  // namespace

std::unique_ptr<Kind> make_mutual_exclusion(Context& context) {
  return std::make_unique<MutualExclusion>(context);
}

}  // namespace locklab::checkers
