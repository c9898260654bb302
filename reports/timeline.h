// What a history says happened, shaped for drawing: per client process its
// holds (FORMAT.md's hold semantics, tracked by the checkers' own engine:
// harness/checkers/holds.h), the operations that failed, were refused or
// stayed unknown, and its writes; and the nemesis faults as intervals. Built
// in one streaming pass, so a 100k-event history costs one small struct per
// hold or mark, not one JSON object per event.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "holds.h"
#include "word_table.h"

namespace locklab::reports {

// How a hold ended: a release, the holder's `lost`, a crash-client, or
// still held when the history ends (EndOfHistory).
using HoldEnd = checkers::HoldEnd;

struct Hold {
  std::string lock;
  int64_t start_ns = 0, end_ns = 0;
  int64_t start_index = 0, end_index = -1;  // end_index -1: open at the end
  std::optional<int64_t> token;
  HoldEnd end = HoldEnd::EndOfHistory;
  std::string owner;  // of the acquire ok that started it
  // The lease as the holder last asked for it: the ttl_ms of the acquire (or
  // of its latest successful extend) and when that request was invoked.
  std::optional<int64_t> ttl_ms;
  int64_t lease_from_ns = 0;
};

enum class MarkKind {
  AcquireFailed,  // acquire fail: definitely not acquired
  Refused,        // release/extend fail: the lock was no longer ours
  Unknown,        // any info completion: outcome unknown (timeout, lost reply)
  WriteAccepted,  // write ok: the protected resource took it
  WriteRejected,  // write fail: fencing rejected it
};
inline constexpr auto kMarkKinds = word_table<MarkKind>({
    {MarkKind::AcquireFailed, "acquire failed", "acquire fail: definitely not acquired"},
    {MarkKind::Refused, "refused (not owner)", "release/extend fail: the lock was no longer ours"},
    {MarkKind::Unknown, "outcome unknown", "any info completion (timeout, lost reply)"},
    {MarkKind::WriteAccepted, "write accepted", "write ok: the protected resource took it"},
    {MarkKind::WriteRejected, "write rejected by fencing", "write fail: fencing rejected it"},
});

// One completed operation worth a symbol on the timeline.
struct Mark {
  MarkKind kind = MarkKind::Unknown;
  int64_t time_ns = 0;
  int64_t index = 0;
  std::string f;
  std::optional<int64_t> token;
  std::string detail;  // error text or the write's read -> write
};

// An operation in flight: from its invoke to its completion.
struct Span {
  int64_t start_ns = 0, end_ns = 0;
  bool ok = false;  // the operation completed with ok
};

struct Lane {
  std::string process;
  std::vector<Hold> holds;            // in start order; the checkers' holds, exactly
  std::vector<Mark> marks;            // in time order
  std::vector<Span> acquire_waits;    // acquire invoke -> completion
  std::optional<int64_t> crashed_ns;  // a crash-client fault named it here
};

struct Fault {
  std::string kind;  // the nemesis event's `f`
  std::vector<std::string> targets;
  std::string parameters;  // the rest of `value`, as "name=value ..."
  int64_t start_ns = 0, end_ns = 0;
  int64_t start_index = 0, end_index = -1;
  bool instant = false;  // a moment, not an interval (crash-client, heal, an unpaired event)
  bool ended = false;    // an end event was recorded (false: drawn to the history's end)
};

// Where and when one event happened.
struct EventPlace {
  int64_t time_ns = 0;
  std::string process;
};

struct Timeline {
  std::vector<Lane> lanes;  // client processes, c2 before c10
  std::vector<Fault> faults;
  int64_t end_ns = 0;  // time of the last event
  int64_t event_count = 0;
  // The events asked for in `keep`, every field as written (required fields first).
  std::map<int64_t, nlohmann::ordered_json> kept_events;
  // Time and process of the events asked for in `locate`.
  std::map<int64_t, EventPlace> places;
};

// Reads the history at `path`, keeping the events whose index is in `keep`
// whole and the place of those in `locate`. Throws history::HistoryError (a
// std::runtime_error) naming the file and line when the file cannot be read
// or breaks FORMAT.md.
Timeline read_timeline(const std::filesystem::path& path, const std::set<int64_t>& keep,
                       const std::set<int64_t>& locate);

// Orders process names as people count: "c2" before "c10".
bool process_name_less(const std::string& a, const std::string& b);

}  // namespace locklab::reports
