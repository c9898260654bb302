#include "checkers.h"

#include <cmath>
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

namespace {

// Rounded to a thousandth (µs for ms): what a reader compares, without the
// noise of float printing; rounding again changes nothing.
double rounded(double value) {
  return std::round(value * 1000) / 1000;
}

nlohmann::json overlap_json(const Overlap& o) {
  nlohmann::json out{
      {"lease_ms", o.lease_ms},
      {"lease_source", o.lease_source},
      {"clock_misjudged", o.clock_misjudged},
      {"late_writes", {{"accepted", o.late_writes_accepted}, {"rejected", o.late_writes_rejected}}},
      {"stopped_by_fencing", o.stopped_by_fencing()},
      {"explanation", o.explanation}};
  auto figure = [&](const char* ms_key, const char* leases_key, const std::optional<double>& ms) {
    if (!ms) return;
    out[ms_key] = rounded(*ms);
    if (o.lease_ms > 0) out[leases_key] = rounded(*ms / o.lease_ms);
  };
  if (!o.unclassified_because.empty()) {
    out["unclassified_because"] = o.unclassified_because;
    if (auto uncertainty = uncertainty_named(o.unclassified_because))
      out["timing_only"] = info(*uncertainty).timing_only;
  }
  figure("inside_lease_ms", "inside_leases", o.inside_lease_ms);
  figure("past_lease_ms", "past_leases", o.past_lease_ms);
  return out;
}

nlohmann::json margin_json(const std::optional<Margin>& m) {
  if (!m) return nullptr;
  return {{"ms", rounded(m->ms)},         {"leases", rounded(m->leases)}, {"lock", m->lock},
          {"processes", m->processes},    {"events", m->events},          {"times_ns", m->times_ns},
          {"explanation", m->explanation}};
}

}  // namespace

nlohmann::json violation_json(const Violation& v) {
  nlohmann::json out{{"kind", v.kind},           {"lock", v.lock},
                     {"processes", v.processes}, {"events", v.events},
                     {"times_ns", v.times_ns},   {"explanation", v.explanation}};
  if (v.overlap) {
    out["class"] = v.overlap->overlap_class;
    out["overlap"] = overlap_json(*v.overlap);
  }
  return out;
}

nlohmann::json harm_json(const Harm& h) {
  return {{"harmful", h.harmful()},
          {"lost_updates", h.lost_updates},
          {"stale_writes", h.stale_writes},
          {"rejected_by_fencing", h.rejected_by_fencing},
          {"overlaps", h.overlaps}};
}

nlohmann::json closest_call_json(const ClosestCall& c) {
  return {{"grant_after_lease", margin_json(c.grant_after_lease)},
          {"write_before_lease_end", margin_json(c.write_before_lease_end)}};
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
          {"unavailable", stretches},
          {"harm", harm_json(harm)},
          {"closest_call", closest_call_json(closest_call)}};
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
