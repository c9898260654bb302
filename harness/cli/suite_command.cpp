// `locklab suite DIR|FILES…`: the scenario × algorithm × run matrix for CI,
// with JUnit XML and sharding. The layout it writes is described in
// harness/suite/suite.h.
#include <unistd.h>

#include <iostream>

#include "commands.h"
#include "libraries.h"
#include "locks_under_test.h"
#include "matrix.h"
#include "runner.h"
#include "suite.h"
#include "summary.h"

namespace locklab {

namespace {

struct SuiteCommandOptions {
  std::vector<std::string> inputs;
  std::string out_dir = "locklab-out/suite";
  std::string junit_file;
  // Cells on real time mostly wait on timers: eight at a time kept every
  // cell of the comparison certain on two cores with two busy loops beside
  // it (docs/PERFORMANCE.md, "How many at a time"). Cells on virtual time
  // run first, at most one per core (SuiteOptions::on_virtual_time).
  int jobs = 8;
  std::string shard = "1/1";
  int runs = 1;
  uint64_t seed = 0;
  std::vector<std::string> algorithms;
  std::string adapter;
  std::string like;
  std::string network;
  std::string target;
  std::string libraries;
  std::string reuse;
  std::string time = "auto";
  bool fresh_adapters = false;
};

// Registers what the suite runs and where it writes on `suite`; returns --seed's option.
CLI::Option* add_matrix_options(CLI::App& suite, SuiteCommandOptions& options) {
  suite
      .add_option("scenarios", options.inputs,
                  "Scenario files, or directories (every *.json in it but schema.json, by name)")
      ->required();
  suite
      .add_option("--out,-o", options.out_dir,
                  "Output directory: results.json, index.html, one directory per scenario")
      ->capture_default_str();
  suite.add_option("--junit", options.junit_file, "Also write JUnit XML to this file");
  suite
      .add_option("--jobs,-j", options.jobs,
                  "Runs at the same time (each has its own servers; those on virtual time, "
                  "which run first, at most one per core)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  suite
      .add_option("--shard", options.shard,
                  "Run only shard I of N (I/N): the cells whose index % N == I-1")
      ->capture_default_str();
  suite.add_option("--runs", options.runs, "Runs per scenario × algorithm (seeds seed, seed+1, …)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  suite.add_option(
      "--reuse", options.reuse,
      "Carry over from this earlier suite's results directory every cell it "
      "measured under the same conditions (same story, lock name, version and "
      "adapter, lab build, Redis version, runs and seed, adapters kept or fresh alike); "
      "run only the rest. May be --out itself");
  return suite.add_option("--seed", options.seed, "Base seed (default: each scenario's)");
}

// Registers which locks the suite tests, and on which servers, on `suite`.
void add_lock_options(CLI::App& suite, SuiteCommandOptions& options) {
  suite.add_option("--algorithm,-a", options.algorithms,
                   "Keep only this lock: a built-in algorithm of each scenario's list, or a "
                   "library of --libraries by its name (repeatable)");
  suite
      .add_option("--adapter", options.adapter,
                  "Test your own lock instead: the command of an adapter program speaking "
                  "harness/adapter/PROTOCOL.md; every scenario runs it alone, held to the "
                  "scenario's default expectation (see --like)")
      ->excludes("--algorithm");
  suite
      .add_option("--like", options.like,
                  "With --adapter: the built-in algorithm your lock stands in for; runs only "
                  "the scenarios that run it, held to its expectations")
      ->needs("--adapter");
  suite
      .add_option("--network", options.network,
                  "How link faults are done in every scenario: proxy or netns (each node in a "
                  "network namespace; needs root) (default: each scenario's topology.network)")
      ->check(CLI::IsMember({"proxy", "netns"}));
  suite.add_option("--target", options.target, kTargetHelp);
  add_time_option(suite, options.time);
  suite.add_flag(
      "--fresh-adapters", options.fresh_adapters,
      "Start every run's adapters anew instead of keeping each between runs "
      "(harness/adapter/PROTOCOL.md, \"Kept between runs\"): a cold runtime's start-up and "
      "first calls in every run, and a new process per client");
  suite
      .add_option("--libraries", options.libraries,
                  "Compare these lock libraries too: a libraries file (lock_impls/libraries/"
                  "libraries.json pins the lab's); each is a column beside the built-in "
                  "algorithms, held to the one it stands in for")
      ->excludes("--adapter");
}

// The locks the suite's cells name, each asked once before anything runs:
// the adapter alone, or every built-in and then the libraries. Adds the
// locks that are not built-ins to `matrix`.
std::vector<LockUnderTest> suite_locks(const SuiteCommandOptions& options,
                                       const std::vector<Scenario>& scenarios,
                                       suite::MatrixOptions& matrix) {
  if (!options.adapter.empty()) {
    LockUnderTest adapter = adapter_lock(options.adapter, options.like);
    matrix.built_ins = false;
    matrix.extra.push_back({adapter.name, adapter.like});
    return {adapter};
  }
  std::vector<LockUnderTest> locks = built_in_locks();
  if (options.libraries.empty()) return locks;
  // -a names the locks to run: no other library's adapter is started.
  Libraries libraries = load_libraries(options.libraries, options.algorithms);
  for (const Scenario& scenario : scenarios)
    check_library_names(scenario, libraries.names, options.libraries);
  for (LockUnderTest& library : libraries.locks) {
    matrix.extra.push_back({library.name, library.like});
    locks.push_back(std::move(library));
  }
  return locks;
}

// The suite's name: that of its one directory, else "suite".
std::string suite_name(const std::vector<std::string>& inputs) {
  std::filesystem::path first(inputs.front());
  std::error_code error;
  const std::string name =
      inputs.size() == 1 && std::filesystem::is_directory(first, error)
          ? std::filesystem::absolute(first).lexically_normal().filename().string()
          : "suite";
  return name.empty() ? "suite" : name;
}

// Everything about the suite but its servers and locks, read and checked.
suite::SuiteOptions suite_options_of(const SuiteCommandOptions& options, bool seed_given) {
  suite::SuiteOptions out;
  out.shard = parse_shard(options.shard);
  out.matrix.algorithms = options.algorithms;
  out.matrix.runs = options.runs;
  if (seed_given) out.matrix.seed = options.seed;
  out.name = suite_name(options.inputs);
  out.out_dir = options.out_dir;
  if (!options.junit_file.empty()) out.junit_file = options.junit_file;
  out.jobs = options.jobs;
  if (!options.reuse.empty()) out.reuse = options.reuse;
  out.invocation = current_invocation();
  out.live_progress = ::isatty(STDERR_FILENO);
  return out;
}

// Runs the suite `options` ask for and returns its exit status.
int run_suite_command(const SuiteCommandOptions& options, bool seed_given) {
  if (!options.like.empty()) suite::check_algorithm_ids({options.like}, "--like");
  suite::SuiteOptions suite_options = suite_options_of(options, seed_given);
  // Every scenario is loaded and checked before anything runs.
  std::vector<Scenario> scenarios = suite::load_scenarios(suite::scenario_files(options.inputs));
  if (!options.network.empty())
    for (Scenario& scenario : scenarios) scenario.topology.network = options.network;
  suite_options.locks = suite_locks(options, scenarios, suite_options.matrix);
  // --algorithm names locks: built-in ids, or the libraries' names.
  for (const auto& name : options.algorithms)
    if (!find_lock(suite_options.locks, name)) suite::check_algorithm_ids({name});
  if (suite::build_matrix(scenarios, suite_options.matrix).empty())
    throw std::invalid_argument(
        "--algorithm: no scenario of the suite lists any of these algorithms");
  const Servers servers = checked_servers(options.target, options.time);
  suite_options.redis_version = servers.redis_version();
  suite_options.time = servers.time;
  suite_options.on_virtual_time = cell_on_virtual_time(suite_options.locks, servers);
  // One pool for every cell: each lock's adapters wait in it while the other
  // locks play the same story, and serve that lock's next story.
  std::shared_ptr<AdapterPool> adapters;
  if (!options.fresh_adapters) adapters = std::make_shared<AdapterPool>();
  const std::vector<LockUnderTest> runs_locks = with_adapters_kept(suite_options.locks, adapters);
  suite_options.adapters_kept = adapters != nullptr;
  if (adapters) suite_options.adapter_counts = [adapters] { return adapters->counts(); };
  nlohmann::json results =
      suite::run_suite(scenarios, suite_options, cell_runner(runs_locks, servers));
  std::cerr << suite::totals_line(suite::SuiteTotals::from_json(results["totals"])) << "\n"
            << "results: " << (suite_options.out_dir / "results.json").string() << "\n";
  if (suite_options.junit_file)
    std::cerr << "junit: " << suite_options.junit_file->string() << "\n";
  if (std::filesystem::exists(suite_options.out_dir / "index.html"))
    std::cerr << "report: " << (suite_options.out_dir / "index.html").string() << "\n";
  return results["exit_status"].get<int>();
}

}  // namespace

Action add_suite_command(CLI::App& parent) {
  auto options = std::make_shared<SuiteCommandOptions>();
  auto* suite = parent.add_subcommand(
      "suite", "Run every scenario × algorithm of a suite; write results.json, JUnit XML, HTML");
  CLI::Option* seed_option = add_matrix_options(*suite, *options);
  add_lock_options(*suite, *options);
  suite->footer(
      "Exit status: 0 every cell met its expectation (or is safer than the built-in, or not "
      "applicable), 1 some expectation not met or some fault never fired, 2 a run failed or bad "
      "input.");
  return [options, seed_option] { return run_suite_command(*options, bool(*seed_option)); };
}

}  // namespace locklab
