// The one search for a breaking point, shared by `locklab sweep` and
// `locklab envelope`: the smallest fault size that breaks a lock, on an axis
// from a gentle end (no fault, or the least of it) to a harsh one, on the
// assumption that a harsher size never breaks less.
//
// The search probes a start, gallops away from it in steps that double
// until it holds a size that breaks and one that does not, and halves the
// gap between them down to the precision. Once the gap is narrow (the
// "near" zone), the caller decides each size by a vote of several runs
// (Majority below); a bound found far from the zone may be confirmed by
// such a vote before it is believed, and the search goes on above it when
// the vote disowns it. How one size is decided (how many runs, which
// violations count) is the caller's; the order of sizes is this file's.
#pragma once

#include <functional>
#include <optional>

#include "outcome.h"

namespace locklab::suite {

struct SearchRange {
  double gentle = 0, harsh = 0;  // the axis's ends; harsh may be below gentle
  double precision = 0;          // the bisection stops at a gap this narrow
  double first_step = 0;         // the gallop's first step (it doubles after each probe)
  double near_zone = 0;          // sizes probed inside a gap this narrow are "near"
  bool confirm = false;          // a bound not already decided near is voted on again
  bool near_is_voted = true;     // a near decision counts as a vote (needs no confirmation)
  // The size as the axis can take it (a whole millisecond, a short rate).
  std::function<double(double)> snap = [](double size) { return size; };
  // The size halfway between a safe and a broken size, snapped.
  std::function<double(double safe, double broken)> middle = [](double safe, double broken) {
    return (safe + broken) / 2;
  };
};

// Decides whether `size` breaks the lock; `near`: decide it by a vote.
// nullopt when the runs could not tell (an error, a fault that never fired):
// the search stops there.
using DecideSize = std::function<std::optional<bool>(double size, bool near)>;

// What the search found: kBreaks, kNeverBreaks, kBreaksWithoutFault (broken
// at the gentle end: nothing safe was found), or kError when a size could not
// be decided (the caller knows why, and may name it: not-applicable,
// not-exercised).
struct Boundary {
  SearchOutcome outcome = SearchOutcome::kError;
  std::optional<double> breaking, last_safe;
};

// Searches from `start` (clamped to the axis and snapped) as the file comment
// says. The confirmation, when asked for, is tried up to four times.
Boundary find_boundary(const SearchRange& range, double start, const DecideSize& decide);

// The k-of-n rule of a vote: a size breaks when k = n/2 + 1 of up to n runs
// do; the vote ends as soon as either side has its majority.
class Majority {
 public:
  explicit Majority(int n) : n_(n < 1 ? 1 : n), k_(n_ / 2 + 1) {}

  // Whether another run is needed.
  bool open() const { return broken_ < k_ && runs_ - broken_ < n_ - k_ + 1; }

  // Counts one run.
  void add(bool broken) {
    ++runs_;
    broken_ += broken;
  }

  bool breaks() const { return broken_ >= k_; }
  int runs() const { return runs_; }
  int broken() const { return broken_; }

 private:
  int n_, k_;
  int runs_ = 0, broken_ = 0;
};

}  // namespace locklab::suite
