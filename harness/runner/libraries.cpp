#include "libraries.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "json_fields.h"

namespace locklab {

std::vector<LockUnderTest> load_libraries(const std::filesystem::path& file) {
  using Fields = JsonFields<LibrariesError>;
  std::ifstream in(file);
  if (!in) throw LibrariesError(file.string() + ": cannot read the libraries file");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw LibrariesError(file.string() + ": not JSON: " + e.what());
  }
  Fields top(document, file, "", Nulls::Refused);
  top.text("description");
  const std::filesystem::path dir = std::filesystem::absolute(file).parent_path();
  std::vector<LockUnderTest> locks = top.list("libraries", [&](Fields entry) {
    const std::string adapter = entry.text("adapter").value_or("");
    if (adapter.empty()) entry.fail(entry.path("adapter"), "must give the adapter's command");
    std::optional<std::string> like = entry.text("like");
    if (like && !find_algorithm(*like))
      entry.fail(entry.path("like"),
                 "names unknown algorithm \"" + *like + "\" (known: " + algorithm_ids() + ")");
    entry.done();
    try {
      return LockUnderTest::from_adapter({.command = adapter, .cwd = dir}, like);
    } catch (const std::exception& e) {
      throw LibrariesError(file.string() + ": " + entry.path("adapter") + ": " + e.what());
    }
  });
  top.done();
  if (locks.empty()) top.fail("libraries", "must list at least one library");
  for (size_t i = 0; i < locks.size(); ++i) {
    bool taken = find_algorithm(locks[i].name) != nullptr;
    for (size_t j = 0; j < i; ++j) taken = taken || locks[i].name == locks[j].name;
    if (taken)
      throw LibrariesError(file.string() + ": libraries[" + std::to_string(i) + "] is named \"" +
                           locks[i].name +
                           "\" like another lock (adapters must answer hello with names of their "
                           "own)");
  }
  return locks;
}

void check_library_names(const Scenario& scenario, const std::vector<LockUnderTest>& libraries,
                         const std::filesystem::path& file) {
  std::vector<std::string> names;
  for (const auto& [name, expectation] : scenario.library_expectations) names.push_back(name);
  for (const auto& [name, why] : scenario.library_not_applicable) names.push_back(name);
  for (const auto& name : names) {
    if (std::any_of(libraries.begin(), libraries.end(),
                    [&](const LockUnderTest& library) { return library.name == name; }))
      continue;
    std::string known;
    for (const auto& library : libraries) known += (known.empty() ? "" : ", ") + library.name;
    throw LibrariesError(scenario.file.string() + ": field 'libraries." + name +
                         "' names no library of " + file.string() +
                         " (its libraries: " + (known.empty() ? "none" : known) + ")");
  }
}

}  // namespace locklab
