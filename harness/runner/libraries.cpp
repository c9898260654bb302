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
    const std::optional<int64_t> retry_ms = entry.integer("retry_ms", 0, 60000);
    std::map<std::string, std::string> gaps;
    if (const nlohmann::json* found = entry.find("envelope_gaps")) {
      if (!found->is_object()) entry.fail(entry.path("envelope_gaps"), "must be an object");
      for (auto it = found->begin(); it != found->end(); ++it) {
        const std::string path = entry.path("envelope_gaps") + "." + it.key();
        if (!envelope_axis_named(it.key()))
          throw LibrariesError(file.string() + ": " + path + ": unknown axis (one of " +
                               envelope_axis_names() + ")");
        if (!it->is_string() || it->get<std::string>().empty())
          throw LibrariesError(file.string() + ": " + path + ": must say why, as a string");
        gaps[it.key()] = it->get<std::string>();
      }
    }
    const std::string not_applicable = entry.text("envelope_not_applicable").value_or("");
    const std::string unclassified = entry.text("unclassified_overlaps").value_or("");
    const std::string deletes_any = entry.text("unlock_deletes_any_holder").value_or("");
    entry.done();
    try {
      LockUnderTest lock = LockUnderTest::from_adapter({.command = adapter, .cwd = dir}, like);
      lock.retry_ms = retry_ms;
      lock.envelope_gaps = std::move(gaps);
      lock.envelope_not_applicable = not_applicable;
      lock.unclassified_overlaps = unclassified;
      lock.unlock_deletes_any_holder = deletes_any;
      return lock;
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
