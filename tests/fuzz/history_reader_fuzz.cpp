// libFuzzer target for the history reader and the checkers. Any input must
// be read the same by both readers, or refused by both with the same
// one-line HistoryError; an input they accept must check the same in memory
// and streaming. Anything else (a crash, another exception, a
// disagreement) is a finding: the target aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "checkers.h"
#include "reader_helpers.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::abort();
}

// check_stream() on the text and check_events() on what EventReader read:
// both throw HistoryError, or both give the same results.
void check_both_ways(const std::string& text) {
  std::vector<locklab::history::Event> events;
  {
    std::istringstream in(text);
    locklab::history::EventReader reader(in, "fuzz.jsonl");
    locklab::history::Event e;
    while (reader.next(e)) events.push_back(std::move(e));
  }
  std::string streamed, in_memory;
  try {
    std::istringstream in(text);
    streamed = locklab::checkers::check_stream(in, "fuzz.jsonl").to_json().dump();
  } catch (const locklab::history::HistoryError&) {
    streamed = "HistoryError";
  }
  try {
    in_memory = locklab::checkers::check_events(events).to_json().dump();
  } catch (const locklab::history::HistoryError&) {
    in_memory = "HistoryError";
  }
  if (streamed != in_memory) finding("check_stream: " + streamed + "\ncheck_events: " + in_memory);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto views = locklab::testing::read_views(text, "fuzz.jsonl");
  const auto full = locklab::testing::read_events(text, "fuzz.jsonl");
  if (views.error != full.error)
    finding("ViewReader: \"" + views.error + "\"\nEventReader: \"" + full.error + "\"");
  if (views.error.find('\n') != std::string::npos) finding("multi-line message: " + views.error);
  if (!views.error.empty()) return 0;
  if (views.views != full.views) finding("the readers' views differ");
  check_both_ways(text);
  return 0;
}
