#include "checkers.h"

#include <fstream>

#include "engine.h"

namespace locklab::checkers {

bool Results::violated() const {
  for (const auto& kind : violation_kind_names()) {
    auto it = counts.find(kind);
    if (it != counts.end() && it->second > 0) return true;
  }
  return false;
}

nlohmann::json violation_json(const Violation& v) {
  return {{"kind", v.kind},     {"lock", v.lock},         {"processes", v.processes},
          {"events", v.events}, {"times_ns", v.times_ns}, {"explanation", v.explanation}};
}

nlohmann::json unavailability_json(const Unavailability& u) {
  return {{"lock", u.lock},
          {"faults", u.faults},
          {"from_ns", u.from_ns},
          {"to_ns", u.to_ns},
          {"events", u.events},
          {"times_ns", u.times_ns},
          {"explanation", u.explanation}};
}

nlohmann::json Results::to_json() const {
  nlohmann::json listed = nlohmann::json::array(), stretches = nlohmann::json::array();
  for (const auto& v : violations) listed.push_back(violation_json(v));
  for (const auto& u : unavailable) stretches.push_back(unavailability_json(u));
  return {{"verdict", violated() ? Verdict::Violated : Verdict::Safe},
          {"counts", counts},
          {"per_lock", per_lock},
          {"violations", listed},
          {"unavailable", stretches}};
}

Results check_events(const std::vector<history::Event>& events, const Options& options) {
  Engine engine(options, [](int64_t index) { return "event " + std::to_string(index); });
  history::visit_events(events, [&](const history::EventView& e) { engine.observe(e); });
  return engine.finish([&](const auto& visit) { history::visit_events(events, visit); });
}

namespace {

std::function<std::string(int64_t)> lines_of(const std::string& name) {
  // A valid history has event i on line i + 1.
  return [name](int64_t index) { return name + ":" + std::to_string(index + 1); };
}

}  // namespace

Results check_file(const std::filesystem::path& history, const Options& options) {
  Engine engine(options, lines_of(history.string()));
  {
    history::ViewReader reader(history);
    while (const history::EventView* e = reader.next()) engine.observe(*e);
  }
  return engine.finish([&](const auto& visit) {
    history::ViewReader again(history);
    while (const history::EventView* e = again.next()) visit(*e);
  });
}

Results check_stream(std::istream& in, const std::string& name, const Options& options) {
  const auto start = in.tellg();
  Engine engine(options, lines_of(name));
  {
    history::ViewReader reader(in, name);
    while (const history::EventView* e = reader.next()) engine.observe(*e);
  }
  Kind::Replay replay;
  if (start != std::istream::pos_type(-1)) {
    replay = [&](const auto& visit) {
      in.clear();
      in.seekg(start);
      history::ViewReader again(in, name);
      while (const history::EventView* e = again.next()) visit(*e);
    };
  }
  return engine.finish(replay);
}

}  // namespace locklab::checkers
