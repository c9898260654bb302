// A set of integers stored as disjoint ranges: the values read from a
// counter that moves forward one step at a time take O(1) memory.
#pragma once

#include <cstdint>
#include <iterator>
#include <limits>
#include <map>

namespace locklab::checkers {

class IntervalSet {
 public:
  bool contains(int64_t value) const {
    auto next = ranges_.upper_bound(value);
    return next != ranges_.begin() && value <= std::prev(next)->second;
  }

  void insert(int64_t value) {
    if (contains(value)) return;
    auto next = ranges_.upper_bound(value);
    const bool joins_next = next != ranges_.end() && value != kMax && next->first == value + 1;
    auto previous = next == ranges_.begin() ? ranges_.end() : std::prev(next);
    const bool joins_previous =
        previous != ranges_.end() && value != kMin && previous->second == value - 1;
    if (joins_previous && joins_next) {
      previous->second = next->second;
      ranges_.erase(next);
    } else if (joins_previous) {
      previous->second = value;
    } else if (joins_next) {
      const int64_t last = next->second;
      ranges_.erase(next);
      ranges_.emplace(value, last);
    } else {
      ranges_.emplace(value, value);
    }
  }

  size_t ranges() const { return ranges_.size(); }

 private:
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::map<int64_t, int64_t> ranges_;  // first -> last, inclusive
};

}  // namespace locklab::checkers
