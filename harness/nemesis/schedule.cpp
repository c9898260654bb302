#include "schedule.h"

#include <algorithm>

namespace locklab {

Schedule::Schedule(std::vector<Fault> faults, std::string_view algorithm)
    : faults_(std::move(faults)) {
  for (const Fault& f : faults_) {
    applies_.push_back(f.applies_to(algorithm));
    if (applies_.back() && f.when) watched_.emplace_back(f.when->client, f.when->step);
    if (applies_.back() && f.until) watched_.emplace_back(f.until->client, f.until->step);
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
  return named_by(&Fault::when, client, step, count);
}

std::vector<size_t> Schedule::until_reached(const std::string& client,
                                            std::string_view step) const {
  return named_by(&Fault::until, client, step, step_count(client, step));
}

std::vector<size_t> Schedule::named_by(std::optional<StepTrigger> Fault::*trigger,
                                       const std::string& client, std::string_view step,
                                       int count) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < faults_.size(); ++i) {
    const std::optional<StepTrigger>& t = faults_[i].*trigger;
    if (applies_[i] && t && t->client == client && t->step == step && t->nth == count)
      out.push_back(i);
  }
  return out;
}

bool Schedule::until_passed(size_t index) const {
  const Fault& f = faults_.at(index);
  return f.until && step_count(f.until->client, f.until->step) >= f.until->nth;
}

std::vector<size_t> Schedule::waiting_for_end_of(size_t index) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < faults_.size(); ++i)
    if (applies_[i] && faults_[i].until_fault_ends == index) out.push_back(i);
  return out;
}

int Schedule::step_count(const std::string& client, std::string_view step) const {
  auto it = step_counts_.find(std::make_pair(client, std::string(step)));
  return it == step_counts_.end() ? 0 : it->second;
}

}  // namespace locklab
