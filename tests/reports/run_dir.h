// Hand-made run directories for the report tests: a history written event by
// event, and a results.json in the shape the runner writes.
#pragma once

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

namespace locklab::reports::fixtures {

using json = nlohmann::ordered_json;

// Appends history events with consecutive indices; times are in ms.
class HistoryBuilder {
 public:
  // Adds one event and returns its index.
  int64_t add(double time_ms, const std::string& process, const std::string& type,
              const std::string& f, json fields = json::object()) {
    json event = {{"index", index_},
                  {"time_ns", int64_t(time_ms * 1e6)},
                  {"process", process},
                  {"type", type},
                  {"f", f}};
    for (auto& [key, value] : fields.items()) event[key] = value;
    lines_ += event.dump() + "\n";
    return index_++;
  }

  int64_t nemesis(double time_ms, const std::string& kind, const std::string& phase,
                  const std::vector<std::string>& targets, json parameters = json::object()) {
    json value = {{"phase", phase}, {"targets", targets}};
    for (auto& [key, v] : parameters.items()) value[key] = v;
    return add(time_ms, "nemesis", "info", kind, {{"value", value}});
  }

  void write(const std::filesystem::path& path) const {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path);
    out << lines_;
  }

  int64_t size() const { return index_; }

 private:
  int64_t index_ = 0;
  std::string lines_;
};

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("test: cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// How many times `needle` occurs in `haystack`.
inline size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size()))
    ++n;
  return n;
}

// The event indices that have an anchor (id="PREFIX-event-N") in `html`.
inline std::set<int64_t> event_anchors(const std::string& html, const std::string& prefix) {
  std::set<int64_t> out;
  const std::string start = "id=\"" + prefix + "-event-";
  for (size_t at = html.find(start); at != std::string::npos; at = html.find(start, at + 1)) {
    size_t digits = at + start.size(), end = digits;
    while (end < html.size() && std::isdigit(static_cast<unsigned char>(html[end]))) ++end;
    if (end > digits && end < html.size() && html[end] == '"')
      out.insert(std::stoll(html.substr(digits, end - digits)));
  }
  return out;
}

// Every file name in `dir` (not recursive).
inline std::set<std::string> files_in(const std::filesystem::path& dir) {
  std::set<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    out.insert(entry.path().filename().string());
  return out;
}

}  // namespace locklab::reports::fixtures
