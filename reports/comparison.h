// A suite read as a comparison of locks: which lock survives what. The suite
// index draws it as a page; comparison_markdown() writes it as the table
// docs/COMPARISON.md holds, so that the table in the repository is what a
// run measured.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results.h"

namespace locklab::reports {

// A column of the comparison: one lock under test.
struct LockColumn {
  std::string name;
  std::string family;   // "old recipe", …, "library"; empty when the suite does not say
  std::string version;  // a library's, as its adapter said
  std::string like;     // the built-in a library stands in for
};

// The locks a suite's results.json lists ("locks"), in its order: the order
// of their design, then the libraries. Empty for a suite that predates it.
std::vector<LockColumn> listed_locks(const nlohmann::ordered_json& suite);

// How one lock fared: the stories it was measured in (run, completed, every
// fault fired), those it survived (no run found a violation), and the names
// of the stories that broke it.
struct Survival {
  size_t measured = 0, survived = 0;
  std::vector<std::string> broken_by;
};

// `lock`'s survival over `stories` (each scenario's results).
Survival survival(const std::vector<const ScenarioResults*>& stories, const std::string& lock);

// The comparison of the suite in SUITE_DIR as Markdown: where it comes from
// (the lab's version, the Redis version, the date, the command), what each
// lock survives, the matrix, and story by story each cell's measurement,
// expectation and why (or why it is not applicable). Throws
// std::runtime_error naming the file when the suite's results.json or a
// scenario's cannot be read.
// With SUITE_DIR/envelope/envelope.json beside it, the safety envelopes
// (envelope_markdown) follow the matrix.
std::string comparison_markdown(const std::filesystem::path& suite_dir);

// The safety envelopes of an envelope document (envelope.json;
// harness/suite/envelope.h) as Markdown: how they were measured, a table of
// lock × axis (the bound, its spread over the repeats, the prediction, ⚠
// where they disagree), and what each design predicts and why.
std::string envelope_markdown(const nlohmann::ordered_json& envelope);

}  // namespace locklab::reports
