// The record with the largest key among those of processes other than a
// given one, counting only records stamped strictly before a given time: the
// question several checkers ask ("did someone else do X before this?"), in
// O(1) memory. Records stamped at the same instant as the question are left
// out, since events with equal time_ns are not ordered.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace locklab::checkers {

// Record: a struct with `int32_t process` and `int64_t key`.
template <class Record>
class BestByOther {
 public:
  // Adds a record stamped `time_ns` (never earlier than the previous one).
  void add(int64_t time_ns, const Record& record) {
    if (time_ns > pending_time_ns_) commit(time_ns);
    pending_.push_back(record);
  }

  // The record with the largest key whose process is not `excluded`, among
  // those stamped before `time_ns`; nullptr when there is none.
  const Record* best_before(int64_t time_ns, int32_t excluded) {
    if (pending_time_ns_ < time_ns) commit(pending_time_ns_);
    if (first_ && first_->process != excluded) return &*first_;
    if (second_ && second_->process != excluded) return &*second_;
    return nullptr;
  }

 private:
  void commit(int64_t new_time_ns) {
    for (const Record& record : pending_) insert(record);
    pending_.clear();
    pending_time_ns_ = new_time_ns;
  }

  // Keeps first_ = the largest key, second_ = the largest among the other processes.
  void insert(const Record& record) {
    if (!first_ || record.key > first_->key) {
      if (first_ && first_->process != record.process) second_ = first_;
      first_ = record;
    } else if (record.process != first_->process && (!second_ || record.key > second_->key)) {
      second_ = record;
    }
  }

  std::optional<Record> first_, second_;
  std::vector<Record> pending_;  // stamped pending_time_ns_
  int64_t pending_time_ns_ = std::numeric_limits<int64_t>::min();
};

}  // namespace locklab::checkers
