// Reads history text with both readers, for tests that compare them.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "reader.h"

namespace locklab::testing {

// Every field of a view as one line, to compare views.
inline std::string describe(const history::EventView& v) {
  auto opt = [](const std::optional<int64_t>& x) { return x ? std::to_string(*x) : "-"; };
  std::string text = std::to_string(v.index) + " " + std::to_string(v.time_ns) + " " +
                     std::string(v.process) + " " + history::to_string(v.type) + " " +
                     std::string(v.f) + " lock=" + (v.lock ? std::string(*v.lock) : "-") +
                     " token=" + opt(v.token) + " ttl=" + opt(v.ttl_ms) +
                     " reentry=" + opt(v.reentry) + " read=" + opt(v.read) +
                     " write=" + opt(v.write) + " deleted=" + opt(v.deleted) +
                     " remaining=" + opt(v.remaining) + " targets=";
  for (auto t : v.targets) text += std::string(t) + ",";
  return text;
}

// What a reader made of a text: the views of its events, or its error.
struct ReadOutcome {
  std::vector<std::string> views;
  std::string error;
  bool operator==(const ReadOutcome&) const = default;
};

inline ReadOutcome read_views(const std::string& text, const std::string& name = "h.jsonl") {
  ReadOutcome out;
  std::istringstream in(text);
  try {
    history::ViewReader reader(in, name);
    while (const history::EventView* v = reader.next()) out.views.push_back(describe(*v));
  } catch (const history::HistoryError& e) {
    out.error = e.what();
  }
  return out;
}

// The same through full Events (EventReader), viewed the way check_events views them.
inline ReadOutcome read_events(const std::string& text, const std::string& name = "h.jsonl") {
  ReadOutcome out;
  std::istringstream in(text);
  std::vector<history::Event> events;
  try {
    history::EventReader reader(in, name);
    history::Event e;
    while (reader.next(e)) events.push_back(std::move(e));
    history::visit_events(events,
                          [&](const history::EventView& v) { out.views.push_back(describe(v)); });
  } catch (const history::HistoryError& e) {
    out.error = e.what();
  }
  return out;
}

}  // namespace locklab::testing
