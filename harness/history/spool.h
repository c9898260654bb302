// How a recorder keeps a run's events on disk while the run goes on: one
// compact binary record per event, turned into its history line only once
// the run has ended. Writing JSON as the events happen cost the clients'
// thread a third of a microsecond an event, time a client then did not
// spend on its lock; a record is a few copies.
//
// The records are private to the process that wrote them (native byte
// order, no version): a spool lives as long as its run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "event.h"

namespace locklab::history {

// Records not yet written to their spool. Room is taken at the end a part
// at a time and is not cleared first: each byte of it is written once.
class RecordBuffer {
 public:
  const char* data() const { return data_.get(); }
  char* data() { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  // Room for `bytes` more at the end, uninitialised, valid until the next
  // call that grows the buffer.
  char* extend(size_t bytes) {
    if (capacity_ - size_ < bytes) grow(bytes);
    char* at = data_.get() + size_;
    size_ += bytes;
    return at;
  }
  // Room for `bytes` in all without growing again.
  void reserve(size_t bytes) {
    if (bytes > capacity_) grow(bytes - size_);
  }
  // Drops what was appended after the first `size` bytes.
  void shrink_to(size_t size) { size_ = std::min(size, size_); }

 private:
  void grow(size_t bytes);

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Appends `event`'s record to `out`; `event.process` and `event.index` are
// left out (a spool holds one process's events; the merge numbers them).
void append_record(RecordBuffer& out, const Event& event);

// A spool read back a record at a time.
class SpoolReader {
 public:
  // Opens `path`, whose records are process `process`'s. Throws naming the
  // path when it cannot be read.
  SpoolReader(std::filesystem::path path, std::string process);

  // Loads the next record; false at the end of the spool. Throws naming
  // the path when a record is cut short.
  bool next();
  // The loaded record's time_ns.
  int64_t time_ns() const { return time_ns_; }
  // The loaded record as the event it was, process included.
  Event event() const;

 private:
  std::filesystem::path path_;
  std::string process_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
  std::string record_;  // the loaded record, without its length
  int64_t time_ns_ = 0;
};

}  // namespace locklab::history
