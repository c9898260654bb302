// A fake cell runner for the safety envelope's tests: no servers, a lock
// breaks (mutual-exclusion) once the story's fault reaches a size of its own.
#pragma once

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "envelope_axis.h"
#include "results.h"
#include "runner.h"

namespace locklab::suite_test {

// A library standing in for set-nx-px through an adapter the fakes never start.
inline LockUnderTest fake_library(const std::string& name = "lib-x") {
  LockUnderTest library;
  library.name = name;
  library.family = "library";
  library.version = name + " 1.2.3";
  library.like = "set-nx-px";
  library.adapter = AdapterConfig{.command = "node " + name + "/adapter.js"};
  return library;
}

// The size of the envelope story's fault in leases: the pause's or the
// partition's length, or the jump's distance; 0 for the baseline.
inline double fault_size(const Scenario& s) {
  if (s.faults.size() < 2) return 0;
  const Fault& fault = s.faults[1];
  const double ms = fault.name() == std::string("server-clock-jump")
                        ? fault.number("delta_ms").value_or(0)
                        : double(fault.duration_ms.value_or(0));
  return ms / double(kEnvelopeLeaseMs);
}

// Breaks `lock` from fault_size() >= threshold(lock) on (an overlap), and
// harms its store (a stale write) from harm_threshold(lock) on, which is the
// same threshold unless given; thread-safe.
inline CellRunner fake_envelope_runner(
    std::function<double(const std::string&)> threshold,
    std::function<double(const std::string&)> harm_threshold = nullptr) {
  auto mutex = std::make_shared<std::mutex>();
  if (!harm_threshold) harm_threshold = threshold;
  return
      [=](const Scenario& s, const std::string& lock, uint64_t seed, const std::filesystem::path&) {
        std::lock_guard guard(*mutex);
        const bool broken = fault_size(s) >= threshold(lock);
        const bool harmed = broken && fault_size(s) >= harm_threshold(lock);
        nlohmann::json violations = nlohmann::json::array();
        if (broken) violations.push_back({{"kind", "mutual-exclusion"}, {"explanation", "x"}});
        if (harmed) violations.push_back({{"kind", "stale-write"}, {"explanation", "y"}});
        return RunResult::from_json(
            {{"algorithm", lock},
             {"verdict", broken ? "violated" : "safe"},
             {"error", nullptr},
             {"history", lock + "/history.jsonl"},
             {"seed", seed},
             {"timing",
              {{"servers", 0.5}, {"clients", 0.25}, {"story", 1}, {"check", 0}, {"teardown", 0}}},
             {"check", {{"verdict", broken ? "violated" : "safe"}, {"violations", violations}}}},
            "fake");
      };
}

}  // namespace locklab::suite_test
