// Runs the checkers both ways (in memory and streaming from a file) and
// picks out what a test asserts on.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checkers.h"
#include "recorder.h"
#include "temp_dir.h"

namespace locklab::testing {

// check_events(), after checking that check_file() on the written history agrees.
inline checkers::Results check(const std::vector<history::Event>& events,
                               const checkers::Options& options = {}) {
  TempDir dir("locklab-checkers-test");
  const auto file = dir.path() / "history.jsonl";
  history::write_jsonl(events, file);
  auto in_memory = checkers::check_events(events, options);
  auto streamed = checkers::check_file(file, options);
  EXPECT_EQ(in_memory.to_json(), streamed.to_json());
  return in_memory;
}

// The number of violations of every kind, as one string, e.g. "mutual-exclusion=1".
inline std::string violation_counts(const checkers::Results& results) {
  std::string text;
  for (const auto& kind : violation_kind_names()) {
    if (results.counts.at(kind) == 0) continue;
    text += (text.empty() ? "" : " ") + kind + "=" + std::to_string(results.counts.at(kind));
  }
  return text;
}

}  // namespace locklab::testing
