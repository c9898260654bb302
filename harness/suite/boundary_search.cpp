#include "boundary_search.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace locklab::suite {
namespace {

class Search {
 public:
  Search(const SearchRange& range, const DecideSize& decide) : range_(range), decide_(decide) {}

  Boundary run(double start) {
    start = range_.snap(std::clamp(start, std::min(range_.gentle, range_.harsh),
                                   std::max(range_.gentle, range_.harsh)));
    std::optional<bool> first = probe(start);
    if (!first) return stopped();
    (*first ? broken_ : safe_) = start;
    if (*first ? !gallop(-1) : !gallop(+1)) return stopped();
    // A bound that rests on one run is voted on again; if the vote disowns
    // it, the search goes on above it (a few times at most).
    for (int round = 0; round < 4; ++round) {
      if (!broken_) return {SearchOutcome::kNeverBreaks, {}, safe_};
      if (!safe_) return {SearchOutcome::kBreaksWithoutFault, broken_, {}};
      if (!bisect()) return stopped();
      if (!range_.confirm || voted_.count(*broken_)) break;
      std::optional<bool> again = probe(*broken_, true);
      if (!again) return stopped();
      if (*again) break;
      safe_ = broken_;
      broken_.reset();
      if (!gallop(+1)) return stopped();
    }
    if (!broken_) return {SearchOutcome::kNeverBreaks, {}, safe_};
    return {SearchOutcome::kBreaks, broken_, safe_};
  }

 private:
  static Boundary stopped() { return {SearchOutcome::kError, {}, {}}; }

  // From the size known on one side of the boundary, steps of growing
  // length toward the other until a probe lands there: toward the harsh end
  // (+1) from a safe size, toward the gentle end (-1) from a broken one.
  // Stops at the axis's end, leaving the other side unknown. False when a
  // size could not be decided.
  bool gallop(int toward) {
    const double dir = (range_.harsh > range_.gentle ? 1 : -1) * toward;
    const double end = toward > 0 ? range_.harsh : range_.gentle;
    std::optional<double>& from = toward > 0 ? safe_ : broken_;
    for (double step = range_.first_step; !(toward > 0 ? broken_ : safe_); step *= 2) {
      if (*from == end) return true;
      double size = range_.snap(*from + dir * step);
      if (dir * (size - end) > 0) size = end;
      std::optional<bool> breaks = probe(size);
      if (!breaks) return false;
      (*breaks ? broken_ : safe_) = size;
    }
    return true;
  }

  // Halves the gap between the safe and the broken size down to the
  // precision. False when a size could not be decided.
  bool bisect() {
    while (std::abs(*broken_ - *safe_) > range_.precision + 1e-9) {
      const double middle = range_.middle(*safe_, *broken_);
      if (middle == *broken_ || middle == *safe_) break;
      std::optional<bool> breaks = probe(middle);
      if (!breaks) return false;
      (*breaks ? broken_ : safe_) = middle;
    }
    return true;
  }

  std::optional<bool> probe(double size, bool confirming = false) {
    const bool near =
        confirming || (safe_ && broken_ && std::abs(*broken_ - *safe_) <= range_.near_zone + 1e-9);
    std::optional<bool> breaks = decide_(size, near);
    if (breaks && near && range_.near_is_voted) voted_.insert(size);
    return breaks;
  }

  const SearchRange& range_;
  const DecideSize& decide_;
  std::optional<double> safe_, broken_;
  std::set<double> voted_;  // sizes decided by a vote
};

}  // namespace

Boundary find_boundary(const SearchRange& range, double start, const DecideSize& decide) {
  return Search(range, decide).run(start);
}

}  // namespace locklab::suite
