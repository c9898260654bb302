// locklab: the command line. Exit status everywhere: 0 as expected (for
// `check`: no violation), 1 a violation found or an expectation unmet, 2 a
// usage, input or infrastructure error (one line on stderr says which).
#include <iostream>

#include <CLI/CLI.hpp>

#include "checkers.h"
#include "lock.h"
#include "process.h"
#include "runner.h"
#include "scenario.h"
#include "version.h"

namespace locklab {
namespace {

constexpr int kUsageError = 2;

void print_run_summary(const nlohmann::json& results) {
  for (const auto& run : results["runs"]) {
    std::string line = run["algorithm"].get<std::string>() + ": " +
                       run.value("verdict", std::string("unknown"));
    if (!run["error"].is_null()) {
      line += " (error: " + run["error"].get<std::string>() + ")";
    } else {
      line += std::string(" — expected ") + run["expected"].value("verdict", "safe") +
              (run.value("expectation_met", false) ? ", met" : ", NOT met");
      const auto& counts = run["check"]["counts"];
      for (auto it = counts.begin(); it != counts.end(); ++it)
        if (it.key() != "events" && it.value().is_number() && it.value().get<int64_t>() > 0 &&
            it.key().find('-') != std::string::npos)
          line += " [" + it.key() + " " + std::to_string(it.value().get<int64_t>()) + "]";
    }
    std::cerr << line << "\n";
  }
}

int cli_main(int argc, char** argv) {
  CLI::App app{"locklab — a correctness and fault-injection lab for Redis distributed locks"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(1);

  auto* run = app.add_subcommand("run", "Run a scenario against real redis-server processes");
  std::string scenario_file;
  std::vector<std::string> algorithms;
  uint64_t seed = 0;
  std::string out_dir;
  run->add_option("scenario", scenario_file, "Scenario file (JSON)")->required();
  run->add_option("--algorithm,-a", algorithms,
                  "Run only this algorithm (repeatable; default: the scenario's list)");
  auto* seed_option = run->add_option("--seed", seed, "Seed (default: the scenario's)");
  run->add_option("--out,-o", out_dir,
                  "Output directory for results.json and <algorithm>/history.jsonl "
                  "(default: locklab-out/<scenario name>)");

  auto* check = app.add_subcommand("check", "Check a history file; print the results as JSON");
  std::string history_file;
  check->add_option("history", history_file, "History file (JSONL)")->required();

  auto* list = app.add_subcommand("list", "List the built-in lock algorithms");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? 0 : kUsageError;
  }

  try {
    if (*list) {
      for (const auto& a : locklab::algorithms()) {
        std::string features;
        if (a.reentrant) features += " reentrant";
        if (a.fencing) features += " fencing";
        if (a.multi_node) features += " multi-node";
        if (a.needs_replica) features += " replicas";
        std::cout << a.id << "\t" << a.description << "\t[" << (features.empty() ? " -" : features)
                  << " ]\n";
      }
      return 0;
    }
    if (*check) {
      auto results = checkers::check_file(history_file);
      std::cout << results.to_json().dump(2) << "\n";
      return results.violated() ? 1 : 0;
    }
    if (*run) {
      Scenario scenario = load_scenario(scenario_file);
      for (const auto& id : algorithms) {
        bool known = false;
        for (const auto& a : locklab::algorithms()) known = known || a.id == id;
        if (!known) throw std::invalid_argument("--algorithm: unknown algorithm '" + id + "' (see `locklab list`)");
      }
      if (!program_available("redis-server"))
        throw std::runtime_error("redis-server is not installed (apt-get install redis-server)");
      RunOptions options;
      options.algorithms = algorithms;
      if (*seed_option) options.seed = seed;
      options.out_dir = out_dir.empty() ? std::filesystem::path("locklab-out") / scenario.name
                                        : std::filesystem::path(out_dir);
      auto results = run_scenario(scenario, options);
      print_run_summary(results);
      std::cerr << "results: " << (options.out_dir / "results.json").string() << "\n";
      return exit_status(results);
    }
  } catch (const std::exception& e) {
    std::cerr << "locklab: error: " << e.what() << "\n";
    return kUsageError;
  }
  return kUsageError;
}

}  // namespace
}  // namespace locklab

int main(int argc, char** argv) {
  locklab::install_termination_cleanup();
  return locklab::cli_main(argc, argv);
}
