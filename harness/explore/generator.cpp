#include "generator.h"

#include <rapidcheck.h>

#include <algorithm>
#include <cmath>

#include "lock.h"
#include "shape.h"

namespace locklab::explore {
namespace {

// Draws values from RapidCheck generators with one splittable random source,
// so that a scenario depends on its seed alone.
class Draw {
 public:
  explicit Draw(uint64_t seed) : random_(seed) {}

  template <typename T>
  T operator()(const rc::Gen<T>& gen) {
    return gen(random_.split(), rc::kNominalSize).value();
  }
  // An integer in [low, high] (both included).
  int64_t between(int64_t low, int64_t high) {
    return high <= low ? low : (*this)(rc::gen::inRange<int64_t>(low, high + 1));
  }
  // A real number in [low, high], to a thousandth of the range.
  double real(double low, double high) {
    return low + (high - low) * double(between(0, 1000)) / 1000.0;
  }
  bool chance(int percent) { return between(1, 100) <= percent; }
  template <typename T>
  T pick(const std::vector<T>& items) {
    return items[size_t(between(0, int64_t(items.size()) - 1))];
  }

 private:
  rc::Random random_;
};

}  // namespace

std::vector<std::string> trigger_steps(const Space& space, bool nesting) {
  const AlgorithmInfo& lock = algorithm_info(space.algorithm);
  std::vector<std::string> steps;
  for (const auto& step : workload_steps())
    if (nesting || !is_nesting_step(step)) steps.push_back(step);
  for (const auto& step : space.lock_steps)
    if (std::find(lock.steps.begin(), lock.steps.end(), step) != lock.steps.end() &&
        std::find(steps.begin(), steps.end(), step) == steps.end())
      steps.push_back(step);
  return steps;
}

std::vector<std::string> coverable_steps(const Space& space) {
  return trigger_steps(space, algorithm_info(space.algorithm).reentrant);
}

std::vector<FaultKind> drawn_kinds(const Space& space) {
  if (!space.fault_kinds.empty()) return space.fault_kinds;
  std::vector<FaultKind> all;
  for (const auto& row : fault_kinds()) all.push_back(row.kind);
  return all;
}

namespace {

int64_t draw_ms(Draw& draw, const DrawnRange& range, int64_t ttl_ms) {
  return std::max<int64_t>(1, std::llround(draw.real(range.low, range.high) * double(ttl_ms)));
}

void draw_params(Draw& draw, Fault& fault, int64_t ttl_ms, bool sentinel_failovers) {
  for (const DrawnRange& range : drawn_ranges(fault.kind)) {
    if (range.optional && draw.chance(40)) continue;
    if (range.param == "rate") {
      // As often slower as faster: 0.25…0.9 or 1.1…4.
      fault.rate = draw.chance(50) ? draw.real(range.low, 0.9) : draw.real(1.1, range.high);
      continue;
    }
    int64_t value = draw_ms(draw, range, ttl_ms);
    if (range.param == "delta_ms" && draw.chance(50)) value = -value;
    if (range.param == "jitter_ms" && fault.delay_ms > 0) value = std::min(value, fault.delay_ms);
    fault.set_number(range.param, double(value));
  }
  for (const FaultParam& p : info(fault.kind).params) {
    if (p.type != ParamType::Choice) continue;
    // Drawn either way, so that the sequence stays the same: a choice that
    // needs Sentinels the space does not allow falls back to the first without.
    size_t chosen = 0;
    if (p.choice_weights.empty()) {
      chosen = size_t(draw.between(0, int64_t(p.choices.size()) - 1));
    } else {
      int64_t total = 0;
      for (int w : p.choice_weights) total += w;
      for (int64_t roll = draw.between(1, total); roll > p.choice_weights[chosen]; ++chosen)
        roll -= p.choice_weights[chosen];
    }
    auto allowed = [&](size_t c) {
      return sentinel_failovers || c >= p.choice_needs.size() ||
             !p.choice_needs[c].has(Need::Sentinels);
    };
    for (size_t c = 0; !allowed(chosen) && c < p.choices.size(); ++c) chosen = c;
    fault.set_choice(p.name, std::string(p.choices[chosen]));
  }
}

}  // namespace

std::span<const DrawnRange> drawn_ranges(FaultKind kind) {
  return info(kind).explore_ranges;
}

Space space_for(const std::string& algorithm) {
  Space space;
  space.algorithm = algorithm;
  space.lock_steps = algorithm_info(algorithm).steps;
  return space;
}

uint64_t scenario_seed(uint64_t seed, uint64_t index) {
  // splitmix64 of (seed, index): neighbouring seeds give unrelated sequences.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) & 0x7FFFFFFFFFFFFFFFull;  // a scenario's seed is a JSON integer
}

Scenario generate(const Space& space, uint64_t seed, uint64_t index) {
  const AlgorithmInfo& lock = algorithm_info(space.algorithm);
  Draw draw(scenario_seed(seed, index));
  Scenario s;
  s.name = "explore-" + std::to_string(seed) + "-" + std::to_string(index);
  s.seed = scenario_seed(seed, index);
  s.algorithms = {space.algorithm};

  Workload& w = s.workload;
  w.ttl_ms =
      draw(rc::gen::weightedElement<int64_t>({{2, 200}, {3, 300}, {3, 500}, {2, 800}, {1, 1000}}));
  w.locks = draw.chance(80) ? std::vector<std::string>{"L"} : std::vector<std::string>{"L", "M"};
  w.wait_ms = draw.between(w.ttl_ms, 2 * w.ttl_ms);
  w.work_ms = draw.chance(70) ? draw.between(0, w.ttl_ms / 5) : draw.between(0, w.ttl_ms / 2);
  w.think_ms = draw.between(0, 10);
  w.fencing = lock.fencing;  // a fenced lock without a store that checks tokens is not that lock
  w.reentry = lock.reentrant && draw.chance(40) ? 2 : 1;
  s.clients = int(draw(rc::gen::weightedElement<int64_t>({{4, 2}, {3, 3}, {2, 4}, {1, 5}})));
  s.duration_ms = std::clamp<int64_t>(draw.between(3 * w.ttl_ms, 6 * w.ttl_ms), 1200, 5000);

  std::vector<std::pair<size_t, FaultKind>> weighted;
  for (FaultKind kind : drawn_kinds(space))
    weighted.emplace_back(size_t(info(kind).explore_weight), kind);
  const std::vector<std::string> steps = trigger_steps(space, w.reentry > 1);
  const int masters = shape_for(lock, s.topology).masters;

  const int64_t fault_count = draw.between(1, std::max(1, space.max_faults));
  for (int64_t i = 0; i < fault_count && !weighted.empty(); ++i) {
    Fault f;
    f.kind = weighted[0].second;
    {
      size_t total = 0;
      for (const auto& [wt, k] : weighted) total += wt;
      int64_t roll = draw.between(1, int64_t(total));
      for (const auto& [wt, k] : weighted) {
        roll -= int64_t(wt);
        if (roll <= 0) {
          f.kind = k;
          break;
        }
      }
    }
    const FaultKindInfo& row = info(f.kind);
    if (draw.chance(50)) {
      f.at_ms = draw.between(0, s.duration_ms * 7 / 10);
    } else {
      f.when = StepTrigger{"c" + std::to_string(draw.between(1, s.clients)), draw.pick(steps),
                           int(draw(rc::gen::weightedElement<int64_t>({{6, 1}, {2, 2}, {1, 3}})))};
    }
    draw_params(draw, f, w.ttl_ms, space.sentinel_failovers);
    if (row.duration == DurationRule::Required && !f.duration_ms)
      f.duration_ms = std::max<int64_t>(1, w.ttl_ms);
    const bool on_clients = row.target == FaultTarget::Client || row.target == FaultTarget::Link;
    const bool on_nodes = row.target == FaultTarget::Server || row.target == FaultTarget::Link;
    // A fault at a step acts on the client that reached it; at a time, on one client or all.
    if (on_clients && (f.at_ms || row.target == FaultTarget::Link) && draw.chance(70))
      f.clients = {f.when ? f.when->client : "c" + std::to_string(draw.between(1, s.clients))};
    if (on_nodes && masters > 1 && draw.chance(70)) {
      // A minority or a majority of the masters.
      const int64_t count = draw.between(1, masters - 1);
      for (int node = 0; node < masters && int64_t(f.nodes.size()) < count; ++node)
        if (draw.chance(60) || masters - node <= count - int64_t(f.nodes.size()))
          f.nodes.push_back(node);
    }
    if (f.needs().has(Need::Replica)) s.topology.replicas = 1;
    if (f.needs().has(Need::Sentinels)) s.topology.sentinels = 3;
    // A server that is killed may come back with what it persisted, or empty.
    if (find_param(f.kind, "restart_after_ms")) s.topology.persistence = draw.chance(50);
    s.faults.push_back(std::move(f));
  }
  if (!space.network.empty()) s.topology.network = space.network;
  s.description = "Generated by locklab explore (seed " + std::to_string(seed) + ", scenario " +
                  std::to_string(index) + ").";
  // The loader is the judge of validity: what it refuses is a generator bug.
  return parse_scenario(scenario_to_json(s), s.name + ".json");
}

}  // namespace locklab::explore
