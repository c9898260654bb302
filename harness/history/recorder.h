// Records a run's history to disk as it happens, so a run's memory does not
// grow with its length: each process appends to its own log (no lock shared
// with other processes), which keeps each event as a compact record
// (spool.h) and spills the records to a file of its own in blocks. When the
// run ends the files are merged by time into the history (FORMAT.md), each
// event turned into its line and numbered as it goes.
#pragma once

#include <cstdio>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "event.h"
#include "spool.h"

namespace locklab::history {

// The events of one process, appended by one thread at a time (time_ns is
// stamped on append, so the log is in time order).
class ProcessLog {
 public:
  // Spills to `spool` (created, truncated); an empty path records nothing.
  ProcessLog(std::string process, int64_t origin_ns, std::filesystem::path spool);
  ~ProcessLog();
  ProcessLog(const ProcessLog&) = delete;
  ProcessLog& operator=(const ProcessLog&) = delete;

  const std::string& process() const { return process_; }
  // The monotonic_ns() from which its events' time_ns count.
  int64_t origin_ns() const { return origin_ns_; }
  // Stamps time_ns (and process) and records the event. Throws with the
  // spool's path when it cannot be written.
  void append(Event event);
  // Records an event learnt of after it happened, at `at_ns` of
  // monotonic_ns(), or at the latest time this log stamped if that is later
  // (a log stays in time order). For a log of late events (Recorder::late_log_for).
  void append_at(Event event, int64_t at_ns);
  int64_t size() const { return count_; }

 private:
  friend class Recorder;
  void flush();

  std::string process_;
  int64_t origin_ns_;
  std::filesystem::path spool_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
  RecordBuffer pending_;  // records not yet written, a block at most
  int64_t count_ = 0;
  int64_t last_time_ns_ = 0;  // the latest time_ns stamped
  bool late_ = false;         // a log of late events (Recorder::late_log_for)
};

class Recorder {
 public:
  // time_ns of every event counts from this moment. Each process's log
  // spills to a file in `spool_dir` (which must exist); the files are
  // removed by write_history() or, at the latest, with the recorder. An empty
  // `spool_dir` records nothing (to measure what recording costs).
  explicit Recorder(std::filesystem::path spool_dir);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // A log for `process`, valid as long as the recorder. Thread-safe.
  ProcessLog& log_for(const std::string& process);
  // A second log for `process`, for events it learns of after they happened
  // (an adapter's background renewals), appended with append_at in the
  // order they happened: they take their place in the history by their own
  // time, among the events recorded meanwhile. Thread-safe.
  ProcessLog& late_log_for(const std::string& process);

  // Merges every log by time (ties keep the order the logs were first asked
  // for, then the order of appends: the order of a stable sort), assigns
  // `index`, and writes the history to `path` atomically (temp file +
  // rename). Returns the number of events. Call once, after all writers
  // stopped. Throws with the path on failure.
  int64_t write_history(const std::filesystem::path& path);

 private:
  ProcessLog& find_or_add(const std::string& process, bool late);

  int64_t origin_ns_;
  std::filesystem::path spool_dir_;
  std::mutex mu_;
  std::deque<ProcessLog> logs_;
};

// Writes `events` as JSONL to `path` atomically (temp file + rename), so a
// history on disk is never half-written. Throws with the path on failure.
void write_jsonl(const std::vector<Event>& events, const std::filesystem::path& path);

}  // namespace locklab::history
