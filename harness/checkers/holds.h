// Holds (../history/FORMAT.md "Holds") exactly as the checkers see them, for
// tools that draw them (the reports' timeline): the checkers' own engine
// (engine.h) follows the events and reports each hold when it ends. A process
// named by a crash-client event holds nothing from that event on, so its
// later acquire oks start no hold.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "reader.h"

namespace locklab::checkers {

class Engine;

// How a hold ended.
enum class HoldEnd {
  Release,       // the release invoke that brought the nesting count to zero
  Lost,          // the holder's own `lost` event
  Crash,         // a crash-client nemesis event named the holder
  EndOfHistory,  // still held when the history ends
};

// One hold: from the acquire ok that started it to the event that ended it.
struct HoldSpan {
  std::string process;
  std::string lock;
  int64_t start_index = 0;
  int64_t start_ns = 0;
  std::optional<int64_t> token;  // of the acquire ok that started it
  int64_t end_index = -1;        // the ending event; -1 for EndOfHistory
  int64_t end_ns = 0;            // for EndOfHistory: the time of the last event observed
  HoldEnd end = HoldEnd::EndOfHistory;
};

// Follows a history event by event and reports every hold when it ends.
// Unlike the checkers it does not refuse a history whose operations do not
// pair up (a completion without its invoke, two operations in flight): a
// completion that does not pair keeps the lock it names, so what the history
// shows can still be drawn.
class HoldTracker {
 public:
  // `on_end` is called once per hold, when it ends: at the event that ends
  // it, or in finish() for the holds still open.
  explicit HoldTracker(std::function<void(const HoldSpan&)> on_end);
  ~HoldTracker();
  HoldTracker(const HoldTracker&) = delete;
  HoldTracker& operator=(const HoldTracker&) = delete;

  // The next event of the history (in index order; the view is not kept).
  void observe(const history::EventView& event);

  // Ends the holds still open (HoldEnd::EndOfHistory, at the time of the
  // last event observed). Call once, after the last event.
  void finish();

 private:
  class Recorder;

  std::function<void(const HoldSpan&)> on_end_;
  int64_t last_ns_ = 0;
  std::unique_ptr<Engine> engine_;
};

}  // namespace locklab::checkers
