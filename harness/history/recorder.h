// Records a run's history cheaply: each process appends to its own buffer
// (no lock, no JSON on the hot path); the buffers are merged by time only
// when the run ends.
#pragma once

#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "event.h"

namespace locklab::history {

// The events of one process, appended by one thread at a time.
class ProcessLog {
 public:
  ProcessLog(std::string process, int64_t origin_ns)
      : process_(std::move(process)), origin_ns_(origin_ns) {}
  const std::string& process() const { return process_; }
  // Stamps time_ns (and process) and appends; returns the stored event.
  Event& append(Event event);
  std::vector<Event>& events() { return events_; }

 private:
  std::string process_;
  int64_t origin_ns_;
  std::vector<Event> events_;
};

class Recorder {
 public:
  // time_ns of every event counts from this moment.
  Recorder();
  // A log for `process`, valid as long as the recorder. Thread-safe.
  ProcessLog& log_for(const std::string& process);
  // Merges every log by time (stable, ties keep process order), assigns
  // `index`, and returns the history. Call once, after all writers stopped.
  std::vector<Event> merge();

 private:
  int64_t origin_ns_;
  std::mutex mu_;
  std::deque<ProcessLog> logs_;
};

// Writes `events` as JSONL to `path` atomically (temp file + rename), so a
// history on disk is never half-written. Throws with the path on failure.
void write_jsonl(const std::vector<Event>& events, const std::filesystem::path& path);

}  // namespace locklab::history
