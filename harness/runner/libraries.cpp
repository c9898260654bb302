#include "libraries.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "joined.h"
#include "json_fields.h"

namespace locklab {

namespace {

// One entry of the file, with its adapter asked hello, or not: `lock` is
// empty when the entry declares a name that is not wanted.
struct Entry {
  std::string name;
  std::optional<LockUnderTest> lock;
};

bool is_wanted(const std::string& name, const std::vector<std::string>& wanted) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), name) != wanted.end();
}

std::map<std::string, std::string> envelope_gaps(JsonFields<LibrariesError>& entry,
                                                 const std::filesystem::path& file) {
  std::map<std::string, std::string> gaps;
  const nlohmann::json* found = entry.find("envelope_gaps");
  if (!found) return gaps;
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
  return gaps;
}

Entry read_entry(JsonFields<LibrariesError>& entry, const std::filesystem::path& file,
                 const std::vector<std::string>& wanted) {
  const std::string declared = entry.text("name").value_or("");
  const std::string adapter = entry.text("adapter").value_or("");
  if (adapter.empty()) entry.fail(entry.path("adapter"), "must give the adapter's command");
  std::optional<std::string> like = entry.text("like");
  if (like && !find_algorithm(*like))
    entry.fail(entry.path("like"),
               "names unknown algorithm \"" + *like + "\" (known: " + algorithm_ids() + ")");
  const std::optional<int64_t> retry_ms = entry.integer("retry_ms", 0, 60000);
  std::map<std::string, std::string> gaps = envelope_gaps(entry, file);
  const std::string not_applicable = entry.text("envelope_not_applicable").value_or("");
  const std::string unclassified = entry.text("unclassified_overlaps").value_or("");
  const std::string deletes_any = entry.text("unlock_deletes_any_holder").value_or("");
  entry.done();
  if (!declared.empty() && !is_wanted(declared, wanted)) return {declared, std::nullopt};
  const std::filesystem::path dir = std::filesystem::absolute(file).parent_path();
  LockUnderTest lock;
  try {
    lock = LockUnderTest::from_adapter({.command = adapter, .cwd = dir}, like);
  } catch (const std::exception& e) {
    throw LibrariesError(file.string() + ": " + entry.path("adapter") + ": " + e.what());
  }
  if (!declared.empty() && lock.name != declared)
    entry.fail(entry.path("name"),
               "is \"" + declared + "\", but its adapter answers hello as \"" + lock.name + "\"");
  lock.retry_ms = retry_ms;
  lock.envelope_gaps = std::move(gaps);
  lock.envelope_not_applicable = not_applicable;
  lock.unclassified_overlaps = unclassified;
  lock.unlock_deletes_any_holder = deletes_any;
  return {lock.name, std::move(lock)};
}

}  // namespace

Libraries load_libraries(const std::filesystem::path& file,
                         const std::vector<std::string>& wanted) {
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
  std::vector<Entry> entries =
      top.list("libraries", [&](Fields entry) { return read_entry(entry, file, wanted); });
  top.done();
  if (entries.empty()) top.fail("libraries", "must list at least one library");
  Libraries libraries;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string& name = entries[i].name;
    const auto& names = libraries.names;
    if (find_algorithm(name) || std::find(names.begin(), names.end(), name) != names.end())
      throw LibrariesError(file.string() + ": libraries[" + std::to_string(i) + "] is named \"" +
                           name +
                           "\" like another lock (adapters must answer hello with names of their "
                           "own)");
    libraries.names.push_back(name);
    if (entries[i].lock) libraries.locks.push_back(std::move(*entries[i].lock));
  }
  return libraries;
}

void check_library_names(const Scenario& scenario, const std::vector<std::string>& names,
                         const std::filesystem::path& file) {
  std::vector<std::string> named;
  for (const auto& [name, expectation] : scenario.library_expectations) named.push_back(name);
  for (const auto& [name, why] : scenario.library_not_applicable) named.push_back(name);
  for (const auto& name : named) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    throw LibrariesError(scenario.file.string() + ": field 'libraries." + name +
                         "' names no library of " + file.string() + " (its libraries: " +
                         (names.empty() ? std::string("none") : joined(names)) + ")");
  }
}

}  // namespace locklab
