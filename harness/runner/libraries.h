// A libraries file: the published lock libraries a comparison runs beside
// the built-in algorithms, each through its adapter (harness/adapter/
// PROTOCOL.md) and held to the built-in it stands in for.
//
//   {"libraries": [{"adapter": "node node-redlock-v4/adapter.js", "like": "redlock",
//                   "retry_ms": 300, "envelope_gaps": {"pause": "why …"}}, …]}
//
// retry_ms, envelope_gaps, envelope_not_applicable, unclassified_overlaps and
// unlock_deletes_any_holder are optional: see LockUnderTest (plan.h).
//
// Each command runs in the file's directory. lock_impls/libraries/libraries.json
// lists the libraries the lab pins; docs/ADDING-A-LIBRARY.md says how to add one.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "plan.h"

namespace locklab {

// A libraries file that cannot be used, or an adapter in it that does not
// answer hello; what() is one line naming the file and the entry.
class LibrariesError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads `file` and asks each adapter hello (once), in the file's order.
// Throws LibrariesError for a malformed file, an unknown `like`, an adapter
// that fails, or two libraries with one name.
std::vector<LockUnderTest> load_libraries(const std::filesystem::path& file);

// Throws LibrariesError when `scenario` says what it expects of a library
// (its "libraries" field) that is not among `libraries`, read from `file`: a
// misspelt name would otherwise hold the library to its built-in's
// expectation without a word.
void check_library_names(const Scenario& scenario, const std::vector<LockUnderTest>& libraries,
                         const std::filesystem::path& file);

}  // namespace locklab
