#include "fault.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace locklab {

using nlohmann::json;

namespace {

std::string ordinal(int n) {
  const int tens = n % 100, ones = n % 10;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : ones == 1                ? "st"
                       : ones == 2                ? "nd"
                       : ones == 3                ? "rd"
                                                  : "th";
  return std::to_string(n) + suffix;
}

[[noreturn]] void not_a_choice(std::string_view param) {
  throw std::invalid_argument("\"" + std::string(param) + "\" is not a choice of a fault");
}

// Sets `field` to the value of `table` named `value`.
template <typename Table, typename Enum>
void set_named(const Table& table, Enum& field, std::string_view param, std::string_view value) {
  const auto named = table.named(value);
  if (!named)
    throw std::invalid_argument("\"" + std::string(value) + "\" is not a " + std::string(param) +
                                " (" + table.list() + ")");
  field = *named;
}

}  // namespace

json Fault::describe() const {
  json j = json::object();
  if (at_ms) j["at_ms"] = *at_ms;
  if (when) {
    j["when"] = {{"client", when->client}, {"step", when->step}, {"nth", when->nth}};
    if (when->after_ms) j["when"]["after_ms"] = when->after_ms;
  }
  if (duration_ms) j["duration_ms"] = *duration_ms;
  if (until) {
    j["until"] = {{"client", until->client}, {"step", until->step}, {"nth", until->nth}};
    if (until->after_ms) j["until"]["after_ms"] = until->after_ms;
  }
  if (until_fault_ends) j["until"] = {{"fault", *until_fault_ends}};
  for (const FaultParam& p : info(kind).params) {
    if (p.type == ParamType::Choice)
      j[std::string(p.name)] = choice(p.name);
    else if (auto value = number(p.name))
      j[std::string(p.name)] =
          p.type == ParamType::Integer ? json(std::llround(*value)) : json(*value);
  }
  return j;
}

std::string Fault::trigger_text() const {
  if (at_ms) return "at " + std::to_string(*at_ms) + " ms";
  if (when)
    return (when->after_ms ? std::to_string(when->after_ms) + " ms after " : "") + when->client +
           " at step " + when->step + " (" + ordinal(when->nth) + " time)";
  return "never";
}

bool Fault::ends() const {
  // These end on their own: the sleep runs out, Sentinel or the lab names
  // the new master, the server is restarted.
  if (kind == FaultKind::Failover || kind == FaultKind::DebugSleep) return true;
  if (kind == FaultKind::CrashNode) return restart_after_ms.has_value();
  return info(kind).undoable && (duration_ms || waits());
}

bool Fault::applies_to(std::string_view algorithm) const {
  return algorithms.empty() ||
         std::find(algorithms.begin(), algorithms.end(), algorithm) != algorithms.end();
}

std::string Fault::choice(std::string_view param) const {
  if (param == "how") return std::string(kPartitionHows.name(how));
  if (param == "mode") return std::string(kFailoverModes.name(mode));
  not_a_choice(param);
}

void Fault::set_choice(std::string_view param, std::string_view value) {
  if (param == "how")
    set_named(kPartitionHows, how, param, value);
  else if (param == "mode")
    set_named(kFailoverModes, mode, param, value);
  else
    not_a_choice(param);
}

std::optional<double> Fault::number(std::string_view param) const {
  if (param == "at_ms") return at_ms ? std::optional<double>(double(*at_ms)) : std::nullopt;
  if (param == "duration_ms")
    return duration_ms ? std::optional<double>(double(*duration_ms)) : std::nullopt;
  if (param == "restart_after_ms")
    return restart_after_ms ? std::optional<double>(double(*restart_after_ms)) : std::nullopt;
  if (param == "delta_ms") return double(delta_ms);
  if (param == "rate") return rate;
  if (param == "delay_ms") return double(delay_ms);
  if (param == "jitter_ms") return double(jitter_ms);
  return std::nullopt;
}

void Fault::set_number(std::string_view param, double value) {
  const int64_t whole = std::llround(value);
  if (param == "at_ms")
    at_ms = whole;
  else if (param == "duration_ms")
    duration_ms = whole;
  else if (param == "restart_after_ms")
    restart_after_ms = whole;
  else if (param == "delta_ms")
    delta_ms = whole;
  else if (param == "rate")
    rate = value;
  else if (param == "delay_ms")
    delay_ms = whole;
  else if (param == "jitter_ms")
    jitter_ms = whole;
  else
    throw std::invalid_argument("\"" + std::string(param) + "\" is not a numeric fault field");
}

Needs Fault::needs() const {
  Needs out = info(kind).needs;
  for (const FaultParam& p : info(kind).params) {
    if (p.type != ParamType::Choice || p.choice_needs.empty()) continue;
    const std::string& chosen = choice(p.name);
    for (size_t c = 0; c < p.choices.size() && c < p.choice_needs.size(); ++c)
      if (p.choices[c] == chosen) out |= p.choice_needs[c];
  }
  return out;
}

Needs needs_of(const std::vector<Fault>& faults) {
  Needs out;
  for (const Fault& f : faults) out |= f.needs();
  return out;
}

}  // namespace locklab
