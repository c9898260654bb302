#include "run_results.h"

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "html.h"

namespace locklab::reports {

namespace {

using json = nlohmann::ordered_json;

// Reads fields of one JSON object, naming the file and the field's path in
// every error, so a broken results.json is fixed in one look.
class Fields {
 public:
  Fields(const json& object, const std::filesystem::path& file, std::string where)
      : object_(object), file_(file), where_(std::move(where)) {
    if (!object_.is_object()) {
      if (where_.empty()) throw std::runtime_error(file_.string() + ": not a JSON object");
      fail(where_, "must be an object");
    }
  }

  const json* find(const std::string& key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }

  std::string text(const std::string& key, std::string fallback = "") const {
    const json* value = find(key);
    if (!value) return fallback;
    if (!value->is_string()) fail(path(key), "must be a string");
    return value->get<std::string>();
  }

  std::optional<std::string> optional_text(const std::string& key) const {
    if (!find(key)) return std::nullopt;
    return text(key);
  }

  std::vector<std::string> texts(const std::string& key) const {
    std::vector<std::string> out;
    const json* value = find(key);
    if (!value) return out;
    if (!value->is_array()) fail(path(key), "must be an array of strings");
    for (const auto& item : *value) {
      if (!item.is_string()) fail(path(key), "must be an array of strings");
      out.push_back(item.get<std::string>());
    }
    return out;
  }

  std::vector<int64_t> integers(const std::string& key) const {
    std::vector<int64_t> out;
    const json* value = find(key);
    if (!value) return out;
    if (!value->is_array()) fail(path(key), "must be an array of integers");
    for (const auto& item : *value) {
      if (!item.is_number_integer()) fail(path(key), "must be an array of integers");
      out.push_back(item.get<int64_t>());
    }
    return out;
  }

  std::optional<int64_t> integer(const std::string& key) const {
    const json* value = find(key);
    if (!value) return std::nullopt;
    if (!value->is_number_integer()) fail(path(key), "must be an integer");
    return value->get<int64_t>();
  }

  std::optional<double> number(const std::string& key) const {
    const json* value = find(key);
    if (!value) return std::nullopt;
    if (!value->is_number()) fail(path(key), "must be a number");
    return value->get<double>();
  }

  // A string as it is, anything else as its JSON text; empty when absent.
  std::string verbatim(const std::string& key) const {
    const json* value = find(key);
    if (!value) return "";
    return value->is_string() ? value->get<std::string>() : value->dump();
  }

  std::optional<bool> boolean(const std::string& key) const {
    const json* value = find(key);
    if (!value) return std::nullopt;
    if (!value->is_boolean()) fail(path(key), "must be true or false");
    return value->get<bool>();
  }

  json object(const std::string& key) const {
    const json* value = find(key);
    if (!value) return nullptr;
    if (!value->is_object()) fail(path(key), "must be an object");
    return *value;
  }

  const json& array(const std::string& key) const {
    static const json empty = json::array();
    const json* value = find(key);
    if (!value) return empty;
    if (!value->is_array()) fail(path(key), "must be an array");
    return *value;
  }

  Fields child(const std::string& key) const { return Fields(*find(key), file_, path(key)); }
  Fields item(const json& element, size_t i, const std::string& key) const {
    return Fields(element, file_, path(key) + "[" + std::to_string(i) + "]");
  }

  std::string path(const std::string& key) const {
    return where_.empty() ? key : where_ + "." + key;
  }

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw std::runtime_error(file_.string() + ": field '" + field + "' " + problem);
  }

 private:
  const json& object_;
  const std::filesystem::path& file_;
  std::string where_;
};

Violation read_violation(const Fields& v) {
  Violation out;
  out.kind = v.text("kind", "violation");
  out.lock = v.text("lock");
  out.processes = v.texts("processes");
  out.events = v.integers("events");
  out.explanation = v.text("explanation");
  return out;
}

AlgorithmRun read_algorithm_run(const Fields& run, const std::filesystem::path& run_dir) {
  AlgorithmRun out;
  out.algorithm = run.text("algorithm");
  if (out.algorithm.empty()) run.fail(run.path("algorithm"), "is missing or empty");

  // An error may be text or a structured object from a newer runner.
  if (run.find("error")) out.error = run.verbatim("error");

  if (run.find("expected")) {
    Fields expected = run.child("expected");
    out.expected_verdict = expected.optional_text("verdict");
    out.expected_kinds = expected.texts("kinds");
    out.expected_absent = expected.texts("absent");
  }
  out.run = run.integer("run");
  out.seed = run.verbatim("seed");
  out.seconds = run.number("seconds");

  std::optional<Fields> check;
  if (run.find("check")) check.emplace(run.child("check"));
  out.verdict = run.text("verdict", check ? check->text("verdict") : "");
  if (out.verdict.empty()) out.verdict = out.error ? "error" : "unknown";

  out.expectation_met = run.boolean("expectation_met");
  if (!out.expectation_met && out.expected_verdict)
    out.expectation_met = out.verdict == *out.expected_verdict;

  std::filesystem::path history = run.text("history");
  if (history.empty()) history = std::filesystem::path(out.algorithm) / "history.jsonl";
  out.history = history.is_absolute() ? history : run_dir / history;

  out.stats = run.object("stats");
  if (check) {
    out.counts = check->object("counts");
    const json& violations = check->array("violations");
    for (size_t i = 0; i < violations.size(); ++i)
      out.violations.push_back(read_violation(check->item(violations[i], i, "violations")));
  }
  return out;
}

}  // namespace

std::vector<std::string> section_ids(const RunResults& results) {
  std::vector<std::string> ids;
  std::set<std::string> taken;
  for (const auto& run : results.runs) {
    std::string base = slug(run.algorithm);
    if (run.run) base += "-run-" + std::to_string(*run.run);
    std::string id = base;
    for (int n = 2; taken.count(id); ++n) id = base + "-" + std::to_string(n);
    taken.insert(id);
    ids.push_back(id);
  }
  return ids;
}

nlohmann::ordered_json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read " + path.string());
  try {
    return json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path.string() + ": not valid JSON (" + e.what() + ")");
  }
}

RunResults read_run_results(const std::filesystem::path& run_dir) {
  RunResults out;
  out.file = run_dir / "results.json";
  json document = read_json_file(out.file);
  Fields top(document, out.file, "");
  out.scenario = top.text("scenario", run_dir.filename().string());
  out.description = top.text("description");
  out.scenario_file = top.text("scenario_file");
  out.locklab_version = top.text("locklab_version");
  out.seed = top.verbatim("seed");
  if (!top.find("runs")) top.fail("runs", "is missing: not the results.json of a run");
  const json& runs = top.array("runs");
  for (size_t i = 0; i < runs.size(); ++i)
    out.runs.push_back(read_algorithm_run(top.item(runs[i], i, "runs"), run_dir));
  return out;
}

}  // namespace locklab::reports
