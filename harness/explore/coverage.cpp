#include "coverage.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "generator.h"

namespace locklab::explore {

void Coverage::add(const Scenario& s, const RunResult& run) {
  std::vector<bool> fired;
  for (size_t i = 0; i < s.faults.size(); ++i)
    fired.push_back(i < run.faults.size() && run.faults[i].fired);
  add(s, fired);
}

void Coverage::add(const Scenario& s, const std::vector<bool>& fired) {
  std::set<std::string> in_run;
  for (const Fault& f : s.faults)
    if (in_run.insert(std::string(f.name())).second) ++kinds_[std::string(f.name())].runs;
  for (size_t i = 0; i < s.faults.size(); ++i) {
    const Fault& f = s.faults[i];
    const bool it_fired = i < fired.size() && fired[i];
    Kind& kind = kinds_[std::string(f.name())];
    ++kind.generated;
    if (f.when) {
      auto& step = steps_[f.when->step];
      ++step.first;
      step.second += it_fired ? 1 : 0;
    }
    if (!it_fired) continue;
    ++kind.fired;
    for (const DrawnRange& range : drawn_ranges(f.kind)) {
      auto value = f.number(range.param);
      if (!value) continue;
      const double v = range.per_ttl ? std::abs(*value) / double(s.workload.ttl_ms) : *value;
      auto [entry, fresh] = kind.ranges.try_emplace(std::string(range.param), v, v);
      entry->second.first = std::min(entry->second.first, v);
      entry->second.second = std::max(entry->second.second, v);
    }
  }
}

CoverageSummary Coverage::summary(const std::vector<FaultKind>& allowed,
                                  const std::vector<std::string>& steps) const {
  CoverageSummary out;
  for (FaultKind k : allowed) {
    const std::string name(info(k).name);
    auto it = kinds_.find(name);
    const Kind none;
    const Kind& c = it == kinds_.end() ? none : it->second;
    KindCoverage kind{.kind = name, .runs = c.runs, .generated = c.generated, .fired = c.fired};
    for (const DrawnRange& range : drawn_ranges(k)) {
      CoverageRange r{.param = std::string(range.param),
                      .unit = range.per_ttl ? "× ttl" : "×",
                      .drawn = {range.low, range.high}};
      if (auto f = c.ranges.find(std::string(range.param)); f != c.ranges.end())
        r.fired = f->second;
      kind.ranges.push_back(r);
    }
    out.fault_kinds.push_back(kind);
    if (c.fired == 0) out.kinds_never_fired.push_back(name);
  }
  for (const auto& step : steps) {
    auto it = steps_.find(step);
    StepCoverage s{.step = step};
    if (it != steps_.end()) s.generated = it->second.first, s.fired = it->second.second;
    out.steps.push_back(s);
    if (s.fired == 0) out.steps_never_fired.push_back(step);
  }
  return out;
}

std::string Coverage::line() const {
  std::string out;
  for (const auto& [name, c] : kinds_)
    out += (out.empty() ? "" : ", ") + name + " " + std::to_string(c.fired) + "/" +
           std::to_string(c.generated);
  return out;
}

}  // namespace locklab::explore
