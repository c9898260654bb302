// `locklab sweep SCENARIO`: binary-search one numeric fault parameter for
// the smallest value that breaks each algorithm (harness/suite/sweep.h).
#include <iostream>

#include "commands.h"
#include "invocation.h"
#include "locks_under_test.h"
#include "matrix.h"
#include "report.h"
#include "scenario.h"
#include "suite.h"
#include "sweep.h"

namespace locklab {

Action add_sweep_command(CLI::App& parent) {
  struct Options {
    std::string scenario_file;
    int64_t fault = 0;
    std::string param;
    double from = 0, to = 0, precision = 0;
    int runs = 1;
    std::string kind;
    uint64_t seed = 0;
    std::vector<std::string> algorithms;
    std::string out_dir;
    std::string time = "real";
  };
  auto options = std::make_shared<Options>();
  auto* sweep = parent.add_subcommand(
      "sweep", "Binary-search a fault parameter for the smallest value that breaks each algorithm");
  sweep->add_option("scenario", options->scenario_file, "Scenario file (JSON)")->required();
  sweep
      ->add_option("--fault", options->fault,
                   "Index of the fault in the scenario's faults (0 = first)")
      ->required();
  sweep
      ->add_option("--param", options->param,
                   "The fault field to vary: duration_ms, delta_ms, rate, delay_ms, jitter_ms, "
                   "restart_after_ms or at_ms")
      ->required();
  sweep->add_option("--from", options->from, "Lower end of the range")->required();
  sweep->add_option("--to", options->to, "Upper end of the range")->required();
  sweep->add_option("--runs", options->runs, "Runs per value; it breaks when one of them does")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sweep->add_option("--precision", options->precision,
                    "Stop when the breaking point is known this closely (default: range / 20)");
  sweep->add_option("--kind", options->kind,
                    "Count only this violation kind as breaking (default: any violation)");
  auto* seed_option =
      sweep->add_option("--seed", options->seed, "Base seed (default: the scenario's)");
  add_time_option(*sweep, options->time);
  sweep->add_option("--algorithm,-a", options->algorithms,
                    "Search this algorithm (repeatable; default: the scenario's list)");
  sweep->add_option("--out,-o", options->out_dir,
                    "Output directory for sweep.json, index.html (the breaking points "
                    "charted) and every probed run's history (default: "
                    "locklab-out/sweep-<scenario name>)");
  sweep->footer(
      "Assumes a larger value never breaks less. Exit status: 0 searched, 2 a run failed or bad "
      "input.");

  return [options, seed_option] {
    Scenario scenario = load_scenario(options->scenario_file);
    suite::check_algorithm_ids(options->algorithms);
    suite::SweepOptions sweep_options;
    suite::SweepSpec& spec = sweep_options.spec;
    if (options->fault < 0)
      throw std::invalid_argument("--fault: " + std::to_string(options->fault) +
                                  " is out of range (0 = the scenario's first fault)");
    spec.fault = size_t(options->fault);
    spec.param = options->param;
    spec.from = options->from;
    spec.to = options->to;
    spec.precision = options->precision;
    spec.runs = options->runs;
    if (!options->kind.empty()) spec.kind = options->kind;
    if (*seed_option) spec.seed = options->seed;
    suite::validate_sweep(scenario, spec);
    const Servers servers = checked_servers("", options->time);
    sweep_options.algorithms = options->algorithms;
    sweep_options.out_dir = options->out_dir.empty()
                                ? std::filesystem::path("locklab-out") / ("sweep-" + scenario.name)
                                : std::filesystem::path(options->out_dir);
    sweep_options.invocation = current_invocation();

    nlohmann::json result =
        suite::run_sweep(scenario, sweep_options, cell_runner(built_in_locks(), servers));
    std::cout << suite::sweep_table(result);
    std::cerr << "results: " << (sweep_options.out_dir / "sweep.json").string() << "\n";
    std::cerr << "report: " << reports::write_report(sweep_options.out_dir).string() << "\n";
    return result["exit_status"].get<int>();
  };
}

}  // namespace locklab
