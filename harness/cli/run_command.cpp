// `locklab run SCENARIO`: one scenario, each of its algorithms on a fresh cluster.
#include <iostream>

#include "commands.h"
#include "lock.h"
#include "locks_under_test.h"
#include "matrix.h"
#include "report.h"
#include "results.h"
#include "runner.h"
#include "scenario.h"

namespace locklab {

Action add_run_command(CLI::App& parent) {
  struct Options {
    std::string scenario_file;
    std::vector<std::string> algorithms;
    uint64_t seed = 0;
    std::string out_dir;
    std::string adapter;
    std::string like;
    std::string network;
    std::string target;
    std::string time = "real";
  };
  auto options = std::make_shared<Options>();
  auto* run = parent.add_subcommand("run", "Run a scenario against real redis-server processes");
  run->add_option("scenario", options->scenario_file, "Scenario file (JSON)")->required();
  run->add_option("--algorithm,-a", options->algorithms,
                  "Run only this algorithm (repeatable; default: the scenario's list)");
  auto* seed_option = run->add_option("--seed", options->seed, "Seed (default: the scenario's)");
  run->add_option("--out,-o", options->out_dir,
                  "Output directory for results.json and <algorithm>/history.jsonl "
                  "(default: locklab-out/<scenario name>)");
  run->add_option("--adapter", options->adapter,
                  "Test your own lock instead: the command of an adapter program speaking "
                  "harness/adapter/PROTOCOL.md (it gets --redis host:port,… appended)")
      ->excludes("--algorithm");
  run->add_option("--like", options->like,
                  "With --adapter: the built-in algorithm your lock stands in for; it is held "
                  "to that algorithm's expectation (default: the scenario's default one)")
      ->needs("--adapter");
  run->add_option("--network", options->network,
                  "How link faults are done: proxy (a fault proxy per link) or netns (each node "
                  "in a network namespace; iptables, netem; needs root) (default: the "
                  "scenario's topology.network, else proxy)")
      ->check(CLI::IsMember({"proxy", "netns"}));
  run->add_option("--target", options->target, kTargetHelp);
  add_time_option(*run, options->time);
  return [options, seed_option] {
    Scenario scenario = load_scenario(options->scenario_file);
    if (!options->network.empty()) scenario.topology.network = options->network;
    suite::check_algorithm_ids(options->algorithms);
    if (!options->like.empty()) suite::check_algorithm_ids({options->like}, "--like");
    RunOptions run_options;
    run_options.servers = checked_servers(options->target, options->time);
    run_options.algorithms = options->algorithms;
    run_options.lock = adapter_lock_if_given(options->adapter, options->like);
    if (*seed_option) run_options.seed = options->seed;
    run_options.out_dir = options->out_dir.empty()
                              ? std::filesystem::path("locklab-out") / scenario.name
                              : std::filesystem::path(options->out_dir);
    ScenarioResults results = run_scenario(scenario, run_options);
    for (const auto& run : results.runs) std::cerr << summary_line(run) << "\n";
    std::cerr << "results: " << (run_options.out_dir / "results.json").string() << "\n";
    try {
      std::cerr << "report: " << reports::write_run_report(run_options.out_dir).string() << "\n";
    } catch (const std::exception& e) {
      // The results stand on their own; a report that cannot be drawn is not a failed run.
      std::cerr << "locklab: warning: HTML report not written: " << e.what() << "\n";
    }
    return exit_status(results);
  };
}

}  // namespace locklab
