// `locklab envelope`: how much of each fault every lock survives, measured
// beside what its design predicts (harness/suite/envelope.h).
#include <iostream>

#include "commands.h"
#include "envelope.h"
#include "invocation.h"
#include "locks_under_test.h"
#include "matrix.h"
#include "report.h"

namespace locklab {

namespace {

// The axes --axis names, in its order; none named: every axis (an empty list).
std::vector<EnvelopeAxis> axes_named(const std::vector<std::string>& names) {
  std::vector<EnvelopeAxis> axes;
  for (const auto& name : names) {
    auto axis = envelope_axis_named(name);
    if (!axis)
      throw std::invalid_argument("--axis: unknown axis \"" + name + "\" (one of " +
                                  envelope_axis_names() + ")");
    axes.push_back(*axis);
  }
  return axes;
}

// The locks --algorithm names, in its order; none named: every lock.
std::vector<LockUnderTest> chosen_locks(std::vector<LockUnderTest> locks,
                                        const std::vector<std::string>& names) {
  if (names.empty()) return locks;
  std::vector<LockUnderTest> chosen;
  for (const auto& name : names) {
    const LockUnderTest* lock = find_lock(locks, name);
    if (!lock) {
      suite::check_algorithm_ids({name});  // throws, naming the known ids
      throw std::invalid_argument("--algorithm: \"" + name + "\" is not among the locks");
    }
    chosen.push_back(*lock);
  }
  return chosen;
}

// What the command line sets.
struct EnvelopeCommandOptions {
  std::vector<std::string> locks;
  std::vector<std::string> axes;
  std::string libraries;
  int repeats = 3;
  int confirm_runs = 3;
  // Eight at a time, no more than two of one runtime: the bounds four at a
  // time gave; eight with four of one runtime moved some (docs/PERFORMANCE.md,
  // section 7).
  int jobs = 8;
  int jobs_per_runtime = 2;
  uint64_t seed = 1;
  std::string out_dir = "locklab-out/envelope";
  std::string reuse;
  std::string time = "auto";
  bool fresh_adapters = false;
};

// How each search is made, and how many at once.
void add_search_options(CLI::App& envelope, EnvelopeCommandOptions& options) {
  envelope
      .add_option("--repeats", options.repeats,
                  "Searches per lock and axis, each with fresh seeds; the bound is their "
                  "median, their minimum and maximum its spread")
      ->check(CLI::Range(1, 50))
      ->capture_default_str();
  envelope
      .add_option("--confirm-runs", options.confirm_runs,
                  "n of the k-of-n rule near the boundary: a size breaks when n/2 + 1 of n "
                  "runs do")
      ->check(CLI::Range(1, 15))
      ->capture_default_str();
  envelope.add_option("--jobs,-j", options.jobs, "Searches at the same time")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  envelope
      .add_option("--jobs-per-runtime", options.jobs_per_runtime,
                  "Of them, at most this many of libraries whose adapters start the same "
                  "program (java/run, node, …); a built-in's searches have no such limit")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
}

}  // namespace

Action add_envelope_command(CLI::App& parent) {
  auto options = std::make_shared<EnvelopeCommandOptions>();
  auto* envelope = parent.add_subcommand(
      "envelope",
      "Measure how much of each fault (pause, clock rate, server clock jump, delay, partition) "
      "every lock survives, beside what its design predicts");
  envelope->add_option("--algorithm,-a", options->locks,
                       "Measure only this lock: a built-in algorithm, or a library of "
                       "--libraries by its name (repeatable; default: every one)");
  envelope->add_option(
      "--axis", options->axes,
      "Measure only this axis (repeatable; default: every one): " + envelope_axis_names());
  envelope->add_option("--libraries", options->libraries,
                       "Measure these lock libraries too: a libraries file "
                       "(lock_impls/libraries/libraries.json pins the lab's); each is held to "
                       "the prediction of the built-in it stands in for");
  add_search_options(*envelope, *options);
  envelope->add_option("--seed", options->seed, "Base seed of every run")->capture_default_str();
  add_time_option(*envelope, options->time);
  envelope
      ->add_option("--out,-o", options->out_dir,
                   "Output directory for envelope.json, index.html (one chart per axis) and "
                   "every probed run's history")
      ->capture_default_str();
  envelope->add_option(
      "--reuse", options->reuse,
      "Carry over from this earlier envelope directory every search it made under the same "
      "conditions (the same locklab build and Redis version, story, axis, lock name, version and "
      "adapter, and seeds; a failed search is made again): after adding a library, only its "
      "searches run. The directory may be --out itself");
  envelope->add_flag(
      "--fresh-adapters", options->fresh_adapters,
      "Start every run's adapters anew instead of keeping "
      "each between runs (harness/adapter/PROTOCOL.md, \"Kept between runs\"): a cold runtime's "
      "start-up and first calls in every run");
  envelope->footer(
      "The story, the axes and each algorithm's prediction: lock_impls/envelope_axis.h and the "
      "algorithms' headers. `locklab report SUITE_DIR` draws SUITE_DIR/envelope/envelope.json on "
      "the comparison page. Exit status: 0 every measurement agrees with its prediction or "
      "libraries.json explains why not (envelope_gaps), 1 some disagree or could not be told, "
      "unexplained, 2 a run failed or bad input.");

  return [options] {
    const std::vector<EnvelopeAxis> axes = axes_named(options->axes);
    const std::vector<LockUnderTest> locks =
        chosen_locks(built_ins_and_libraries(options->libraries, options->locks), options->locks);
    const Servers servers = checked_servers("", options->time);
    // One pool for every search: a lock's searches come one after another,
    // so its adapters are taken again before they are pushed out.
    std::shared_ptr<AdapterPool> adapters;
    if (!options->fresh_adapters) adapters = std::make_shared<AdapterPool>();
    const std::vector<LockUnderTest> runs_locks = with_adapters_kept(locks, adapters);

    suite::EnvelopeOptions envelope_options{.locks = locks,
                                            .axes = axes,
                                            .repeats = options->repeats,
                                            .confirm_runs = options->confirm_runs,
                                            .jobs = options->jobs,
                                            .jobs_per_runtime = options->jobs_per_runtime,
                                            .seed = options->seed,
                                            .out_dir = options->out_dir,
                                            .redis_version = servers.redis_version(),
                                            .invocation = current_invocation(),
                                            .reuse = options->reuse,
                                            .adapters = adapters};
    nlohmann::json result = suite::run_envelope(envelope_options, cell_runner(runs_locks, servers));
    std::cout << suite::envelope_table(result);
    std::cerr << "results: " << (envelope_options.out_dir / "envelope.json").string() << "\n";
    std::cerr << "report: " << reports::write_report(envelope_options.out_dir).string() << "\n";
    return result["exit_status"].get<int>();
  };
}

}  // namespace locklab
