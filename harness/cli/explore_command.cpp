// `locklab explore (ALGORITHM | --adapter CMD)`: generated fault schedules
// against real redis-servers; each violation found is shrunk to a minimal
// scenario file (harness/explore/explore.h).
#include <chrono>
#include <iostream>

#include "commands.h"
#include "explore.h"
#include "invocation.h"
#include "lock.h"
#include "locks_under_test.h"
#include "matrix.h"
#include "process.h"

namespace locklab {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  for (char c : text + ",") {
    if (c != ',') {
      item += c;
    } else if (!item.empty()) {
      items.push_back(item);
      item.clear();
    }
  }
  return items;
}

// The built-in algorithm an adapter's scenarios are written for: the one it
// stands in for, else the simplest one with its abilities.
std::string stand_in(const LockUnderTest& hello, const std::string& like) {
  if (!like.empty()) return like;
  if (hello.reentrant) return "redisson-hash";
  if (hello.fencing) return "fenced";
  return "set-nx-px";
}

struct ExploreCommandOptions {
  std::string algorithm, adapter, like, out_dir, faults, kinds, reproduce = "2/3", shard = "1/1";
  std::string target, network, time = "auto";
  double minutes = 0;
  int64_t runs = 0;
  int jobs = 2, confirm_runs = 10, shrink_candidates = 60, max_found = 8;
  uint64_t seed = 0;
};

// Which of the options that have no default were given.
struct GivenOptions {
  bool minutes = false, runs = false, seed = false;
};

// The options whose absence means something; added by add_budget_options.
struct OptionalOptions {
  CLI::Option* minutes;
  CLI::Option* runs;
  CLI::Option* seed;

  GivenOptions given() const { return {bool(*minutes), bool(*runs), bool(*seed)}; }
};

// Registers the lock to explore and where results go on `explore`.
void add_lock_options(CLI::App& explore, ExploreCommandOptions& options) {
  explore.add_option("algorithm", options.algorithm, "The built-in algorithm to explore");
  explore.add_option("--adapter", options.adapter,
                     "Explore your own lock instead: an adapter program's command "
                     "(harness/adapter/PROTOCOL.md)");
  explore
      .add_option("--like", options.like,
                  "With --adapter: the built-in algorithm your lock stands in for (its "
                  "topology and steps)")
      ->needs("--adapter");
  explore.add_option("--out,-o", options.out_dir,
                     "Output directory: explore.json, index.html, found/*.json "
                     "(default: locklab-out/explore-<lock>)");
}

// Registers how long and how wide the exploration runs on `explore`.
OptionalOptions add_budget_options(CLI::App& explore, ExploreCommandOptions& options) {
  OptionalOptions optional;
  optional.minutes = explore.add_option(
      "--minutes", options.minutes, "Explore for this long (default: 5 unless --runs is given)");
  optional.runs =
      explore.add_option("--runs", options.runs, "Explore this many generated runs at most");
  explore.add_option("--jobs,-j", options.jobs, "Runs at the same time (each has its own servers)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  explore
      .add_option("--shard", options.shard,
                  "Explore only shard I of N (I/N): generated scenarios I-1, I-1+N, …; give "
                  "every shard the same --seed")
      ->capture_default_str();
  optional.seed = explore.add_option(
      "--seed", options.seed,
      "Names the sequence of generated scenarios (default: from the clock; printed, recorded)");
  return optional;
}

// Registers what is generated, what is looked for and how it is shrunk on `explore`.
void add_search_options(CLI::App& explore, ExploreCommandOptions& options) {
  explore.add_option("--faults", options.faults,
                     "Fault kinds to generate, comma-separated (default: all; see `locklab list "
                     "--faults`)");
  explore.add_option("--kinds", options.kinds,
                     "Violation kinds to look for, comma-separated (default: any)");
  explore
      .add_option("--reproduce", options.reproduce,
                  "K/N: while shrinking, a scenario still breaks when K of N runs break")
      ->capture_default_str();
  explore
      .add_option("--confirm-runs", options.confirm_runs,
                  "Runs that measure each minimal scenario's reproduction rate")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  explore
      .add_option("--shrink-candidates", options.shrink_candidates,
                  "Simpler scenarios tried at most per violation")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  explore.add_option("--max-found", options.max_found, "Distinct violations shrunk at most")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  explore
      .add_option("--network", options.network,
                  "How link faults are done in every generated scenario: proxy (a fault proxy "
                  "per link) or netns (each node in a network namespace; iptables, netem; needs "
                  "root); found scenarios keep it (default: proxy)")
      ->check(CLI::IsMember({"proxy", "netns"}));
  explore.add_option("--target", options.target,
                     std::string(kTargetHelp) +
                         "; without --faults, only the faults the target can take are tried");
  add_time_option(explore, options.time);
}

// The fault kinds of --faults, in its order.
std::vector<FaultKind> fault_kinds_named(const std::string& list) {
  std::vector<FaultKind> kinds;
  for (const auto& name : split_list(list)) {
    auto kind = fault_kind_named(name);
    if (!kind)
      throw std::invalid_argument("--faults: unknown fault kind \"" + name +
                                  "\" (known: " + fault_kind_names() + ")");
    kinds.push_back(*kind);
  }
  return kinds;
}

// Sets `o`'s needed and reruns from --reproduce's K/N.
void parse_reproduce(const std::string& text, explore::ExploreOptions& o) {
  const auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    o.needed = std::stoi(text.substr(0, slash));
    o.reruns = std::stoi(text.substr(slash + 1));
  } catch (const std::exception&) {
    throw std::invalid_argument("--reproduce: expected K/N (e.g. 2/3), got \"" + text + "\"");
  }
}

// The exploration's options but its lock, servers and output, read and checked.
explore::ExploreOptions explore_options_of(const ExploreCommandOptions& options,
                                           const GivenOptions& given) {
  explore::ExploreOptions o;
  if (options.algorithm.empty() == options.adapter.empty())
    throw std::invalid_argument(
        "explore: give either an ALGORITHM or --adapter CMD (see `locklab list`)");
  if (!options.algorithm.empty()) suite::check_algorithm_ids({options.algorithm}, "algorithm");
  if (!options.like.empty()) suite::check_algorithm_ids({options.like}, "--like");
  o.space.fault_kinds = fault_kinds_named(options.faults);
  o.kinds = split_list(options.kinds);
  parse_reproduce(options.reproduce, o);
  if (given.minutes && options.minutes <= 0)
    throw std::invalid_argument("--minutes: must be more than 0");
  if (given.runs) o.max_runs = options.runs;
  o.max_time = std::chrono::seconds(given.minutes ? int64_t(options.minutes * 60)
                                                  : (given.runs ? int64_t(24 * 3600) : 300));
  o.jobs = options.jobs;
  o.shard = parse_shard(options.shard);
  o.space.network = options.network;
  o.seed = given.seed
               ? options.seed
               : uint64_t(std::chrono::system_clock::now().time_since_epoch().count() / 1000) %
                     1'000'000'000;
  o.confirm_runs = options.confirm_runs;
  o.shrink_candidates = options.shrink_candidates;
  o.max_found = options.max_found;
  explore::validate(o);
  return o;
}

// Fits `o`'s space to `servers`: on a target without --faults, only the
// faults it can take are generated, since generated runs all of whose
// faults are unavailable would spend the budget.
void fit_to_servers(const Servers& servers, explore::ExploreOptions& o) {
  if (servers.target && o.space.fault_kinds.empty())
    for (const auto& row : fault_kinds())
      if (row.needs.without(servers.provides()).empty()) o.space.fault_kinds.push_back(row.kind);
  // On virtual time, without --faults, only the kinds that act on it.
  if (servers.time == TimeMode::Virtual && o.space.fault_kinds.empty())
    for (const auto& row : fault_kinds())
      if (row.real_time_only.empty()) o.space.fault_kinds.push_back(row.kind);
  o.space.sentinel_failovers =
      servers.provides().has(Need::Sentinels) && servers.time != TimeMode::Virtual;
}

// The lock to explore, asked once; sets what `o` takes from it.
LockUnderTest explored_lock(const ExploreCommandOptions& options, explore::ExploreOptions& o) {
  if (options.adapter.empty()) {
    LockUnderTest lock = LockUnderTest::built_in(options.algorithm);
    o.space.algorithm = lock.name;
    o.space.lock_steps = lock.steps;
    return lock;
  }
  LockUnderTest lock = adapter_lock(options.adapter, options.like);
  o.space.algorithm = stand_in(lock, options.like);
  o.space.lock_steps = lock.steps;
  o.name = lock.name;
  o.external = lock;
  return lock;
}

// The line that says what the exploration is about to do.
void print_plan(const std::string& lock_name, const explore::ExploreOptions& o,
                bool minutes_given) {
  std::cerr << "explore " << lock_name << ": seed " << o.seed << ", "
            << (o.max_runs ? std::to_string(*o.max_runs) + " runs" : "")
            << (o.max_runs && minutes_given ? " or " : "")
            << (minutes_given || !o.max_runs ? std::to_string(o.max_time.count()) + " s" : "")
            << ", " << o.jobs << " at a time" << std::endl;
}

// What the exploration found and where it wrote it.
void print_result(const explore::Exploration& result, const explore::ExploreOptions& o) {
  for (const auto& f : result.found)
    std::cerr << "found: " << (o.out_dir / f.file).string() << " (" << f.reproduced.broke << " of "
              << f.reproduced.runs << " runs)\n";
  if (result.error) std::cerr << "locklab: error: " << *result.error << "\n";
  std::cerr << "results: " << (o.out_dir / "explore.json").string() << "\n"
            << "report: " << (o.out_dir / "index.html").string() << "\n";
}

// Runs the exploration `options` ask for and returns its exit status.
int run_explore_command(const ExploreCommandOptions& options, const GivenOptions& given) {
  explore::ExploreOptions o = explore_options_of(options, given);
  const Servers servers = checked_servers(options.target, options.time);
  fit_to_servers(servers, o);
  const LockUnderTest lock = explored_lock(options, o);
  const CellRunner run_cell = cell_runner({lock}, servers);
  const std::string lock_name = o.name.empty() ? o.space.algorithm : o.name;
  o.out_dir = options.out_dir.empty()
                  ? std::filesystem::path("locklab-out") / ("explore-" + lock_name)
                  : std::filesystem::path(options.out_dir);
  o.invocation = current_invocation();
  std::atomic<bool> stop{false};
  o.stop = &stop;
  GracefulStop graceful([&stop] {
    stop = true;
    std::cerr << "\nexplore: stopping: runs in flight finish, then what was found is written "
                 "(Ctrl-C again ends it at once)"
              << std::endl;
  });
  print_plan(lock_name, o, given.minutes);
  const explore::Exploration result = explore::run_explore(o, run_cell);
  print_result(result, o);
  return result.interrupted && result.exit_status == 0 ? 130 : result.exit_status;
}

}  // namespace

Action add_explore_command(CLI::App& parent) {
  auto options = std::make_shared<ExploreCommandOptions>();
  auto* explore = parent.add_subcommand(
      "explore",
      "Generate fault schedules against real redis-servers and shrink every violation found to "
      "a minimal scenario");
  add_lock_options(*explore, *options);
  const OptionalOptions optional = add_budget_options(*explore, *options);
  add_search_options(*explore, *options);
  explore->footer(
      "Exit status: 0 nothing found, 1 a violation found, 2 bad input or no run could be made, "
      "130 interrupted with nothing found. Ctrl-C stops it: runs in flight finish and what was "
      "found is written; a second Ctrl-C ends it at once. What it generates, how it shrinks and "
      "what it writes: harness/explore/FORMAT.md.");
  return [options, optional] { return run_explore_command(*options, optional.given()); };
}

}  // namespace locklab
