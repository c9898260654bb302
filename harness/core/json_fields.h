// Reading the fields of a JSON document that people write or keep (a
// scenario, a target, results.json, explore.json): every error is one line
// naming the file and the field's path, "FILE: field 'a.b[2].c' must be a
// string", so a broken file is fixed in one look.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace locklab {

// How a loader treats a field whose value is null.
enum class Nulls {
  Refused,  // a value of the wrong type (input people write: null is a mistake)
  Absent,   // as if the field were not there (documents the lab writes and reads back)
};

// The fields of one JSON object. `Error` is the loader's exception type,
// constructed from the one-line message. Every getter returns nullopt (or an
// empty container) for an absent field and throws Error for a value of the
// wrong type; getters remember which keys were asked for, so that done()
// can refuse the rest.
template <typename Error>
class JsonFields {
 public:
  using json = nlohmann::json;

  // `path` is the object's own path in the document ("" for the document
  // itself, "workload", "runs[2]"). Throws Error when `object` is not an object.
  JsonFields(const json& object, const std::filesystem::path& file, std::string path = "",
             Nulls nulls = Nulls::Absent)
      : object_(object), file_(file), path_(std::move(path)), nulls_(nulls) {
    if (object_.is_object()) return;
    if (path_.empty()) throw Error(file_.string() + ": not a JSON object");
    fail(path_, "must be an object");
  }

  // The value at `key`, or nullptr when absent.
  const json* find(const std::string& key) {
    asked_.insert(key);
    auto it = object_.find(key);
    if (it == object_.end() || (nulls_ == Nulls::Absent && it->is_null())) return nullptr;
    return &*it;
  }

  std::optional<std::string> text(const std::string& key) {
    const json* value = find(key);
    if (!value) return std::nullopt;
    if (!value->is_string()) fail(path(key), "must be a string");
    return value->get<std::string>();
  }

  std::optional<bool> boolean(const std::string& key) {
    const json* value = find(key);
    if (!value) return std::nullopt;
    if (!value->is_boolean()) fail(path(key), "must be true or false");
    return value->get<bool>();
  }

  std::optional<int64_t> integer(const std::string& key) {
    const json* value = find(key);
    if (!value) return std::nullopt;
    if (!value->is_number_integer()) fail(path(key), "must be an integer");
    return value->get<int64_t>();
  }

  // An integer that must lie in [min, max].
  std::optional<int64_t> integer(const std::string& key, int64_t min, int64_t max) {
    std::optional<int64_t> n = integer(key);
    if (n && (*n < min || *n > max))
      fail(path(key), "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                          ", got " + std::to_string(*n));
    return n;
  }

  std::optional<uint64_t> unsigned_integer(const std::string& key) {
    const json* value = find(key);
    if (!value) return std::nullopt;
    if (!value->is_number_unsigned() && !(value->is_number_integer() && *value >= 0))
      fail(path(key), "must be a non-negative integer");
    return value->get<uint64_t>();
  }

  std::optional<double> number(const std::string& key) {
    const json* value = find(key);
    if (!value) return std::nullopt;
    if (!value->is_number()) fail(path(key), "must be a number");
    return value->get<double>();
  }

  std::optional<std::vector<std::string>> texts(const std::string& key) {
    const json* value = find(key);
    if (!value) return std::nullopt;
    std::vector<std::string> out;
    if (!value->is_array()) fail(path(key), "must be an array of strings");
    for (const auto& item : *value) {
      if (!item.is_string()) fail(path(key), "must be an array of strings");
      out.push_back(item.get<std::string>());
    }
    return out;
  }

  std::vector<int64_t> integers(const std::string& key) {
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

  // An object of integers, e.g. {"mutual-exclusion": 2}.
  std::map<std::string, int64_t> integer_map(const std::string& key) {
    std::map<std::string, int64_t> out;
    if (!find(key)) return out;
    JsonFields map = child(key);
    for (const auto& [name, value] : map.object_.items())
      if (auto n = map.integer(name)) out[name] = *n;
    return out;
  }

  // The array at `key`, each element read by `read(JsonFields&)`.
  template <typename Read>
  auto list(const std::string& key, Read read) {
    using Item = decltype(read(std::declval<JsonFields&>()));
    std::vector<Item> out;
    const json* value = find(key);
    if (!value) return out;
    if (!value->is_array()) fail(path(key), "must be an array");
    for (size_t i = 0; i < value->size(); ++i) {
      JsonFields element((*value)[i], file_, path(key) + "[" + std::to_string(i) + "]", nulls_);
      out.push_back(read(element));
    }
    return out;
  }

  // The object at `key` (which must be there: find() it first).
  JsonFields child(const std::string& key) {
    const json* value = find(key);
    if (!value) fail(path(key), "is missing");
    return JsonFields(*value, file_, path(key), nulls_);
  }

  // Refuses every field no getter asked for: a typo must not be silently ignored.
  void done() const {
    for (auto it = object_.begin(); it != object_.end(); ++it)
      if (!asked_.count(it.key())) fail(path(it.key()), "is not a known field");
  }

  const json& object() const { return object_; }
  const std::filesystem::path& file() const { return file_; }

  // The path of `key` in the document: "workload.ttl_ms".
  std::string path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw Error(file_.string() + ": field '" + field + "' " + problem);
  }

 private:
  const json& object_;
  std::filesystem::path file_;
  std::string path_;
  Nulls nulls_;
  std::set<std::string> asked_;
};

}  // namespace locklab
