// `locklab explore (ALGORITHM | --adapter CMD)`: generated fault schedules
// against real redis-servers; each violation found is shrunk to a minimal
// scenario file (harness/explore/explore.h).
#include <chrono>
#include <iostream>

#include "adapter_lock.h"
#include "commands.h"
#include "explore.h"
#include "invocation.h"
#include "lock.h"
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

}  // namespace

Action add_explore_command(CLI::App& parent) {
  struct Options {
    std::string algorithm, adapter, like, out_dir, faults, kinds, reproduce = "2/3", shard = "1/1";
    std::string target, network;
    double minutes = 0;
    int64_t runs = 0;
    int jobs = 1, confirm_runs = 10, shrink_candidates = 60, max_found = 8;
    uint64_t seed = 0;
  };
  auto options = std::make_shared<Options>();
  auto* explore = parent.add_subcommand(
      "explore",
      "Generate fault schedules against real redis-servers and shrink every violation found to "
      "a minimal scenario");
  explore->add_option("algorithm", options->algorithm, "The built-in algorithm to explore");
  explore->add_option("--adapter", options->adapter,
                      "Explore your own lock instead: an adapter program's command "
                      "(harness/adapter/PROTOCOL.md)");
  explore
      ->add_option("--like", options->like,
                   "With --adapter: the built-in algorithm your lock stands in for (its "
                   "topology and steps)")
      ->needs("--adapter");
  explore->add_option("--out,-o", options->out_dir,
                      "Output directory: explore.json, index.html, found/*.json "
                      "(default: locklab-out/explore-<lock>)");
  auto* minutes = explore->add_option("--minutes", options->minutes,
                                      "Explore for this long (default: 5 unless --runs is given)");
  auto* runs =
      explore->add_option("--runs", options->runs, "Explore this many generated runs at most");
  explore
      ->add_option("--jobs,-j", options->jobs, "Runs at the same time (each has its own servers)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  explore
      ->add_option("--shard", options->shard,
                   "Explore only shard I of N (I/N): generated scenarios I-1, I-1+N, …; give "
                   "every shard the same --seed")
      ->capture_default_str();
  auto* seed = explore->add_option(
      "--seed", options->seed,
      "Names the sequence of generated scenarios (default: from the clock; printed, recorded)");
  explore->add_option("--faults", options->faults,
                      "Fault kinds to generate, comma-separated (default: all; see `locklab list "
                      "--faults`)");
  explore->add_option("--kinds", options->kinds,
                      "Violation kinds to look for, comma-separated (default: any)");
  explore
      ->add_option("--reproduce", options->reproduce,
                   "K/N: while shrinking, a scenario still breaks when K of N runs break")
      ->capture_default_str();
  explore
      ->add_option("--confirm-runs", options->confirm_runs,
                   "Runs that measure each minimal scenario's reproduction rate")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  explore
      ->add_option("--shrink-candidates", options->shrink_candidates,
                   "Simpler scenarios tried at most per violation")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  explore->add_option("--max-found", options->max_found, "Distinct violations shrunk at most")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  explore
      ->add_option("--network", options->network,
                   "How link faults are done in every generated scenario: proxy (a fault proxy "
                   "per link) or netns (each node in a network namespace; iptables, netem; needs "
                   "root); found scenarios keep it (default: proxy)")
      ->check(CLI::IsMember({"proxy", "netns"}));
  explore->add_option("--target", options->target,
                      std::string(kTargetHelp) +
                          "; without --faults, only the faults the target can take are tried");
  explore->footer(
      "Exit status: 0 nothing found, 1 a violation found, 2 bad input or no run could be made, "
      "130 interrupted with nothing found. Ctrl-C stops it: runs in flight finish and what was "
      "found is written; a second Ctrl-C ends it at once. What it generates, how it shrinks and "
      "what it writes: harness/explore/FORMAT.md.");

  return [options, minutes, runs, seed] {
    explore::ExploreOptions o;
    if (options->algorithm.empty() == options->adapter.empty())
      throw std::invalid_argument(
          "explore: give either an ALGORITHM or --adapter CMD (see `locklab list`)");
    if (!options->algorithm.empty()) suite::check_algorithm_ids({options->algorithm}, "algorithm");
    if (!options->like.empty()) suite::check_algorithm_ids({options->like}, "--like");
    for (const auto& name : split_list(options->faults)) {
      auto kind = fault_kind_named(name);
      if (!kind)
        throw std::invalid_argument("--faults: unknown fault kind \"" + name +
                                    "\" (known: " + fault_kind_names() + ")");
      o.space.fault_kinds.push_back(*kind);
    }
    o.kinds = split_list(options->kinds);
    const auto slash = options->reproduce.find('/');
    try {
      if (slash == std::string::npos) throw std::invalid_argument("no slash");
      o.needed = std::stoi(options->reproduce.substr(0, slash));
      o.reruns = std::stoi(options->reproduce.substr(slash + 1));
    } catch (const std::exception&) {
      throw std::invalid_argument("--reproduce: expected K/N (e.g. 2/3), got \"" +
                                  options->reproduce + "\"");
    }
    if (*minutes && options->minutes <= 0)
      throw std::invalid_argument("--minutes: must be more than 0");
    if (*runs) o.max_runs = options->runs;
    o.max_time = std::chrono::seconds(*minutes ? int64_t(options->minutes * 60)
                                               : (*runs ? int64_t(24 * 3600) : 300));
    o.jobs = options->jobs;
    o.shard = parse_shard(options->shard);
    o.space.network = options->network;
    o.seed = *seed ? options->seed
                   : uint64_t(std::chrono::system_clock::now().time_since_epoch().count() / 1000) %
                         1'000'000'000;
    o.confirm_runs = options->confirm_runs;
    o.shrink_candidates = options->shrink_candidates;
    o.max_found = options->max_found;
    explore::validate(o);
    const auto target = load_checked_target(options->target);
    if (!target && !program_available("redis-server"))
      throw std::runtime_error("redis-server is not installed (apt-get install redis-server)");
    const Servers servers{target};
    // Generated runs all of whose faults are unavailable would spend the budget.
    if (target && o.space.fault_kinds.empty())
      for (const auto& row : fault_kinds())
        if (row.needs.without(servers.provides()).empty()) o.space.fault_kinds.push_back(row.kind);
    o.space.sentinel_failovers = servers.provides().has(Need::Sentinels);

    LockUnderTest lock;
    if (!options->adapter.empty()) {
      std::optional<std::string> like;
      if (!options->like.empty()) like = options->like;
      lock = LockUnderTest::from_adapter({.command = options->adapter}, like);
      o.space.algorithm = stand_in(lock, options->like);
      o.space.lock_steps = lock.steps;
      o.name = lock.name;
      o.external = lock;
    } else {
      lock = LockUnderTest::built_in(options->algorithm);
      o.space.algorithm = lock.name;
      o.space.lock_steps = lock.steps;
    }
    const CellRunner run_cell = cell_runner({lock}, servers);
    const std::string lock_name = o.name.empty() ? o.space.algorithm : o.name;
    o.out_dir = options->out_dir.empty()
                    ? std::filesystem::path("locklab-out") / ("explore-" + lock_name)
                    : std::filesystem::path(options->out_dir);
    o.invocation = current_invocation();
    std::atomic<bool> stop{false};
    o.stop = &stop;
    GracefulStop graceful([&stop] {
      stop = true;
      std::cerr << "\nexplore: stopping: runs in flight finish, then what was found is written "
                   "(Ctrl-C again ends it at once)"
                << std::endl;
    });
    std::cerr << "explore " << lock_name << ": seed " << o.seed << ", "
              << (o.max_runs ? std::to_string(*o.max_runs) + " runs" : "")
              << (o.max_runs && *minutes ? " or " : "")
              << (*minutes || !o.max_runs ? std::to_string(o.max_time.count()) + " s" : "") << ", "
              << o.jobs << " at a time" << std::endl;
    const explore::Exploration result = explore::run_explore(o, run_cell);
    for (const auto& f : result.found)
      std::cerr << "found: " << (o.out_dir / f.file).string() << " (" << f.reproduced.broke
                << " of " << f.reproduced.runs << " runs)\n";
    if (result.error) std::cerr << "locklab: error: " << *result.error << "\n";
    std::cerr << "results: " << (o.out_dir / "explore.json").string() << "\n"
              << "report: " << (o.out_dir / "index.html").string() << "\n";
    return result.interrupted && result.exit_status == 0 ? 130 : result.exit_status;
  };
}

}  // namespace locklab
