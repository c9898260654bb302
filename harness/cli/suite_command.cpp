// `locklab suite DIR|FILES…`: the scenario × algorithm × run matrix for CI,
// with JUnit XML and sharding. The layout it writes is described in
// harness/suite/suite.h.
#include <unistd.h>

#include <iostream>

#include "adapter_lock.h"
#include "commands.h"
#include "libraries.h"
#include "matrix.h"
#include "process.h"
#include "runner.h"
#include "suite.h"
#include "summary.h"

namespace locklab {

Action add_suite_command(CLI::App& parent) {
  struct Options {
    std::vector<std::string> inputs;
    std::string out_dir = "locklab-out/suite";
    std::string junit_file;
    int jobs = 1;
    std::string shard = "1/1";
    int runs = 1;
    uint64_t seed = 0;
    std::vector<std::string> algorithms;
    std::string adapter;
    std::string like;
    std::string network;
    std::string target;
    std::string libraries;
  };
  auto options = std::make_shared<Options>();
  auto* suite = parent.add_subcommand(
      "suite", "Run every scenario × algorithm of a suite; write results.json, JUnit XML, HTML");
  suite
      ->add_option("scenarios", options->inputs,
                   "Scenario files, or directories (every *.json in it but schema.json, by name)")
      ->required();
  suite
      ->add_option("--out,-o", options->out_dir,
                   "Output directory: results.json, index.html, one directory per scenario")
      ->capture_default_str();
  suite->add_option("--junit", options->junit_file, "Also write JUnit XML to this file");
  suite->add_option("--jobs,-j", options->jobs, "Runs at the same time (each has its own servers)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  suite
      ->add_option("--shard", options->shard,
                   "Run only shard I of N (I/N): the cells whose index % N == I-1")
      ->capture_default_str();
  suite
      ->add_option("--runs", options->runs, "Runs per scenario × algorithm (seeds seed, seed+1, …)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  auto* seed_option =
      suite->add_option("--seed", options->seed, "Base seed (default: each scenario's)");
  suite->add_option("--algorithm,-a", options->algorithms,
                    "Keep only this lock: a built-in algorithm of each scenario's list, or a "
                    "library of --libraries by its name (repeatable)");
  suite
      ->add_option("--adapter", options->adapter,
                   "Test your own lock instead: the command of an adapter program speaking "
                   "harness/adapter/PROTOCOL.md; every scenario runs it alone, held to the "
                   "scenario's default expectation (see --like)")
      ->excludes("--algorithm");
  suite
      ->add_option("--like", options->like,
                   "With --adapter: the built-in algorithm your lock stands in for; runs only "
                   "the scenarios that run it, held to its expectations")
      ->needs("--adapter");
  suite
      ->add_option("--network", options->network,
                   "How link faults are done in every scenario: proxy or netns (each node in a "
                   "network namespace; needs root) (default: each scenario's topology.network)")
      ->check(CLI::IsMember({"proxy", "netns"}));
  suite->add_option("--target", options->target, kTargetHelp);
  suite
      ->add_option("--libraries", options->libraries,
                   "Compare these lock libraries too: a libraries file (lock_impls/libraries/"
                   "libraries.json pins the lab's); each is a column beside the built-in "
                   "algorithms, held to the one it stands in for")
      ->excludes("--adapter");
  suite->footer(
      "Exit status: 0 every cell met its expectation (or is safer than the built-in, or not "
      "applicable), 1 some expectation not met or some fault never fired, 2 a run failed or bad "
      "input.");

  return [options, seed_option] {
    if (!options->like.empty()) suite::check_algorithm_ids({options->like}, "--like");
    suite::SuiteOptions suite_options;
    suite_options.shard = parse_shard(options->shard);
    // Every scenario is loaded and checked before anything runs.
    std::vector<Scenario> scenarios = suite::load_scenarios(suite::scenario_files(options->inputs));
    if (!options->network.empty())
      for (Scenario& scenario : scenarios) scenario.topology.network = options->network;
    suite_options.matrix.algorithms = options->algorithms;
    std::vector<LockUnderTest> locks;
    if (!options->adapter.empty()) {
      // Asked once, before anything runs: a broken adapter is one error, not one per cell.
      std::optional<std::string> like;
      if (!options->like.empty()) like = options->like;
      locks.push_back(LockUnderTest::from_adapter({.command = options->adapter}, like));
      suite_options.matrix.built_ins = false;
      suite_options.matrix.extra.push_back({locks.back().name, like});
    } else {
      locks = built_in_locks();
      // Asked once each, before anything runs.
      if (!options->libraries.empty()) {
        std::vector<LockUnderTest> libraries = load_libraries(options->libraries);
        for (const Scenario& scenario : scenarios)
          check_library_names(scenario, libraries, options->libraries);
        for (LockUnderTest& library : libraries) {
          suite_options.matrix.extra.push_back({library.name, library.like});
          locks.push_back(std::move(library));
        }
      }
    }
    // --algorithm names locks: built-in ids, or the libraries' names.
    for (const auto& name : options->algorithms)
      if (std::none_of(locks.begin(), locks.end(),
                       [&](const LockUnderTest& lock) { return lock.name == name; }))
        suite::check_algorithm_ids({name});
    suite_options.matrix.runs = options->runs;
    if (*seed_option) suite_options.matrix.seed = options->seed;
    if (suite::build_matrix(scenarios, suite_options.matrix).empty())
      throw std::invalid_argument(
          "--algorithm: no scenario of the suite lists any of these algorithms");
    const auto target = load_checked_target(options->target);
    if (!target && !program_available("redis-server"))
      throw std::runtime_error("redis-server is not installed (apt-get install redis-server)");

    std::filesystem::path first(options->inputs.front());
    std::error_code error;
    suite_options.name =
        options->inputs.size() == 1 && std::filesystem::is_directory(first, error)
            ? std::filesystem::absolute(first).lexically_normal().filename().string()
            : "suite";
    if (suite_options.name.empty()) suite_options.name = "suite";
    suite_options.out_dir = options->out_dir;
    if (!options->junit_file.empty()) suite_options.junit_file = options->junit_file;
    suite_options.jobs = options->jobs;
    suite_options.invocation = current_invocation();
    suite_options.live_progress = ::isatty(STDERR_FILENO);

    suite_options.locks = locks;
    suite_options.redis_version = Servers{target}.redis_version();
    nlohmann::json results =
        suite::run_suite(scenarios, suite_options, cell_runner(locks, Servers{target}));
    std::cerr << suite::totals_line(suite::SuiteTotals::from_json(results["totals"])) << "\n"
              << "results: " << (suite_options.out_dir / "results.json").string() << "\n";
    if (suite_options.junit_file)
      std::cerr << "junit: " << suite_options.junit_file->string() << "\n";
    if (std::filesystem::exists(suite_options.out_dir / "index.html"))
      std::cerr << "report: " << (suite_options.out_dir / "index.html").string() << "\n";
    return results["exit_status"].get<int>();
  };
}

}  // namespace locklab
