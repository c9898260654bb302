#include "recorder.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "clock.h"

namespace locklab::history {

Event& ProcessLog::append(Event event) {
  event.time_ns = monotonic_ns() - origin_ns_;
  event.process = process_;
  events_.push_back(std::move(event));
  return events_.back();
}

Recorder::Recorder() : origin_ns_(monotonic_ns()) {}

ProcessLog& Recorder::log_for(const std::string& process) {
  std::lock_guard lock(mu_);
  for (auto& log : logs_)
    if (log.process() == process) return log;
  return logs_.emplace_back(process, origin_ns_);
}

std::vector<Event> Recorder::merge() {
  std::lock_guard lock(mu_);
  std::vector<Event> all;
  for (auto& log : logs_) {
    auto& events = log.events();
    all.insert(all.end(), std::make_move_iterator(events.begin()),
               std::make_move_iterator(events.end()));
    events.clear();
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  for (size_t i = 0; i < all.size(); ++i) all[i].index = int64_t(i);
  return all;
}

void write_jsonl(const std::vector<Event>& events, const std::filesystem::path& path) {
  auto tmp = path;
  tmp += ".partial";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    for (const auto& e : events) out << to_json(e).dump() << '\n';
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace locklab::history
