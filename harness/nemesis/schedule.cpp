#include "schedule.h"

#include <algorithm>

namespace locklab {

Schedule::Schedule(std::vector<Fault> faults, std::string_view algorithm)
    : faults_(std::move(faults)) {
  for (const Fault& f : faults_) {
    applies_.push_back(f.applies_to(algorithm));
    if (applies_.back() && f.when) watched_.emplace_back(f.when->client, f.when->step);
  }
}

bool Schedule::watches(std::string_view client, std::string_view step) const {
  return std::any_of(watched_.begin(), watched_.end(),
                     [&](const auto& w) { return w.first == client && w.second == step; });
}

std::vector<std::pair<int64_t, size_t>> Schedule::timed() const {
  std::vector<std::pair<int64_t, size_t>> out;
  for (size_t i = 0; i < faults_.size(); ++i)
    if (applies_[i] && faults_[i].at_ms) out.emplace_back(*faults_[i].at_ms, i);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::vector<size_t> Schedule::on_step(const std::string& client, std::string_view step) {
  const int count = ++step_counts_[{client, std::string(step)}];
  std::vector<size_t> fired;
  for (size_t i = 0; i < faults_.size(); ++i) {
    const Fault& f = faults_[i];
    if (applies_[i] && f.when && f.when->client == client && f.when->step == step &&
        f.when->nth == count)
      fired.push_back(i);
  }
  return fired;
}

int Schedule::step_count(const std::string& client, std::string_view step) const {
  auto it = step_counts_.find(std::make_pair(client, std::string(step)));
  return it == step_counts_.end() ? 0 : it->second;
}

}  // namespace locklab
