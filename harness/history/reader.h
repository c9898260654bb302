// Reading a history file (FORMAT.md beside this file) line by line, checking
// every line against the format. Memory stays bounded by one line plus what
// the caller keeps.
//
// Two readers accept exactly the same files and fail with the same messages:
// EventReader gives full Events (every field, unknown ones kept); ViewReader
// gives EventViews, the few fields checkers read, and is several times faster.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "event.h"

namespace locklab::history {

// A history that does not follow FORMAT.md, or cannot be read. what() is one
// line: "<file>:<line>: <what is wrong>" (malformed JSON adds the column).
class HistoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The fields of one event that checkers read. The strings point into storage
// owned by whoever produced the view, valid until that producer moves on.
struct EventView {
  int64_t index = 0;
  int64_t time_ns = 0;
  std::string_view process;
  Type type = Type::Info;
  std::string_view f;
  std::optional<std::string_view> lock;
  std::optional<int64_t> token;
  std::optional<int64_t> client_time_ns;  // the client's own clock
  // Integer fields of `value` (FORMAT.md, "Operations and their value").
  std::optional<int64_t> ttl_ms;          // acquire, extend invoke; renewed
  std::optional<int64_t> validity_ms;     // acquire ok: how long the holder may act
  std::optional<int64_t> attempt_ns;      // acquire ok: when the attempt that won began
  std::optional<int64_t> sent_ns;         // renewed: when the watchdog sent the renewal
  std::optional<int64_t> reentry;         // acquire ok: nesting depth after it
  std::optional<int64_t> read;            // write: the counter value read
  std::optional<int64_t> write;           // write: the value written
  std::optional<int64_t> deleted;         // release ok: keys an unconditional DEL removed
  std::optional<int64_t> remaining;       // release ok: nesting depth left
  std::vector<std::string_view> targets;  // crash-client: the processes it kills
  // Boolean fields of `value`: acquire ok. The lock renews this lease in the
  // background (a watchdog), and the history records those renewals.
  bool renews = false;
  bool renewals_recorded = false;
  // Nemesis events (FORMAT.md, "Nemesis events"): whether the fault starts or
  // ends here (value.phase), which fault of the run it is (value.fault), and
  // whether it is over once applied (value.moment).
  enum class Phase { None, Start, End };
  Phase phase = Phase::None;
  std::optional<int64_t> fault;
  bool moment = false;

  bool is_nemesis() const { return process == "nemesis"; }
};

// Streams full events, parsed with nlohmann::json: unknown fields are kept in
// Event::extra. For reports and tools; checkers use ViewReader.
class EventReader {
 public:
  // Throws HistoryError naming `file` when it cannot be opened.
  explicit EventReader(const std::filesystem::path& file);
  // Reads `in` (which must outlive the reader); `name` stands for the file in messages.
  EventReader(std::istream& in, std::string name);
  ~EventReader();
  EventReader(const EventReader&) = delete;
  EventReader& operator=(const EventReader&) = delete;

  // Moves the next event into `event`; false at the end of the input.
  // Throws HistoryError for a line that breaks the format.
  bool next(Event& event);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Streams EventViews, the checkers' path: simdjson parses each line; any line
// it does not take is handed to EventReader's parser, which decides, so both
// readers accept the same files with the same messages.
class ViewReader {
 public:
  explicit ViewReader(const std::filesystem::path& file);
  ViewReader(std::istream& in, std::string name);
  ~ViewReader();
  ViewReader(const ViewReader&) = delete;
  ViewReader& operator=(const ViewReader&) = delete;

  // The next event, valid until the following call; nullptr at the end of the
  // input. Throws HistoryError for a line that breaks the format.
  const EventView* next();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The view of one full event (its strings point into `event`, which must
// outlive it), as a reader would give it. Throws HistoryError ("event
// <index>: ...") when a value field checkers read has the wrong type or a
// crash-client event lacks its targets.
EventView view_of(const Event& event);

// Reads a whole history file into memory. Throws HistoryError.
std::vector<Event> read_history(const std::filesystem::path& file);

// Checks in-memory `events` by the rules a file's lines follow (index
// consecutive from 0, time_ns non-decreasing, value fields typed) and calls
// `visit` with the view of each, in order. Errors read "event <position>: ...".
void visit_events(const std::vector<Event>& events,
                  const std::function<void(const EventView&)>& visit);

}  // namespace locklab::history
