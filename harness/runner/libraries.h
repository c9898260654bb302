// A libraries file: the published lock libraries a comparison runs beside
// the built-in algorithms, each through its adapter (harness/adapter/
// PROTOCOL.md) and held to the built-in it stands in for.
//
//   {"libraries": [{"name": "node-redlock-v4", "adapter": "node node-redlock-v4/adapter.js",
//                   "like": "redlock", "retry_ms": 300, "envelope_gaps": {"pause": "why …"}}, …]}
//
// name (the name the adapter answers hello with, declared so that a run of
// other locks need not start it to learn it), retry_ms, envelope_gaps, envelope_not_applicable,
// unclassified_overlaps and unlock_deletes_any_holder are optional: see LockUnderTest (plan.h).
//
// Each command runs in the file's directory. lock_impls/libraries/libraries.json
// lists the libraries the lab pins; docs/ADDING-A-LIBRARY.md says how to add one.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "plan.h"

namespace locklab {

// A libraries file that cannot be used, or an adapter in it that does not
// answer hello; what() is one line naming the file and the entry.
class LibrariesError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The libraries of a file.
struct Libraries {
  std::vector<LockUnderTest> locks;  // those asked hello, in the file's order
  std::vector<std::string> names;    // every library's, asked or declared, in the file's order
};

// Reads `file` and asks hello (once) of each adapter, in the file's order,
// except of those whose declared name is not among a non-empty `wanted`
// (lock names): a run of some locks starts no adapter of the others, each a
// runtime's start-up (a JVM's seconds of CPU). Throws LibrariesError for a
// malformed file, an unknown `like`, an adapter that fails or answers hello
// with a name other than its entry declares, or two libraries with one name.
Libraries load_libraries(const std::filesystem::path& file,
                         const std::vector<std::string>& wanted = {});

// Throws LibrariesError when `scenario` says what it expects of a library
// (its "libraries" field) that is not among `names`, the libraries of
// `file`: a misspelt name would otherwise hold the library to its built-in's
// expectation without a word.
void check_library_names(const Scenario& scenario, const std::vector<std::string>& names,
                         const std::filesystem::path& file);

}  // namespace locklab
