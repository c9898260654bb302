#include "explore.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "atomic_file.h"
#include "checkers.h"
#include "coverage.h"
#include "html.h"
#include "invocation.h"
#include "joined.h"
#include "lock.h"
#include "report.h"
#include "shrink.h"
#include "temp_dir.h"
#include "version.h"

namespace locklab::explore {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> fault_kind_set(const Scenario& s) {
  std::set<std::string> kinds;
  for (const Fault& f : s.faults) kinds.insert(std::string(f.name()));
  return {kinds.begin(), kinds.end()};
}

bool subset(const std::vector<std::string>& small, const std::vector<std::string>& big) {
  return std::includes(big.begin(), big.end(), small.begin(), small.end());
}

bool meet(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(),
                     [&](const std::string& k) { return std::count(b.begin(), b.end(), k); });
}

// The sought kinds a run found: every kind found, or only those asked for.
std::vector<std::string> sought_found(const RunResult& run,
                                      const std::vector<std::string>& sought) {
  std::vector<std::string> found =
      run.check ? run.check->found_kinds() : std::vector<std::string>{};
  if (sought.empty()) return found;
  std::vector<std::string> kept;
  for (const auto& k : found)
    if (std::count(sought.begin(), sought.end(), k)) kept.push_back(k);
  return kept;
}

// A generated run that broke the lock.
struct Broken {
  uint64_t index = 0;
  Scenario scenario;
  std::vector<std::string> kinds;        // sought kinds found
  std::vector<std::string> fault_kinds;  // of its scenario
};

struct Finding {
  std::string name;
  Scenario minimal;
  uint64_t from_run = 0;
  size_t original_faults = 0;
  std::vector<std::string> sought;       // the kinds its shrink kept
  std::vector<std::string> kinds;        // found in its confirmation runs
  std::vector<std::string> fault_kinds;  // of the minimal scenario
  ShrinkResult shrink;
  int confirm_runs = 0, confirm_broke = 0;
  std::vector<uint64_t> same_cause_runs;  // generated runs folded into it
};

class Explorer {
 public:
  Explorer(const ExploreOptions& options, const CellRunner& run_cell)
      : options_(options),
        run_cell_(run_cell),
        name_(options.name.empty() ? options.space.algorithm : options.name) {}

  Exploration run() {
    const std::string started_at = utc_now();
    start_ = Clock::now();
    fs::create_directories(options_.out_dir);
    // What an earlier exploration into the same directory found is not this one's.
    fs::remove_all(options_.out_dir / "found");
    fs::remove_all(options_.out_dir / "runs");
    explore_runs();
    explore_seconds_ = std::chrono::duration<double>(Clock::now() - start_).count();
    shrink_findings();
    Exploration document = document_of(started_at);
    write_exploration_file(document, options_.out_dir / "explore.json");
    write_explore_index(document, options_.out_dir);
    return document;
  }

 private:
  bool stopping() const { return options_.stop && options_.stop->load(); }

  bool budget_left(uint64_t index) const {
    if (options_.max_runs && int64_t(index) >= *options_.max_runs) return false;
    return Clock::now() - start_ < options_.max_time && !stopping() && !abort_;
  }

  // One run, never throwing: an infrastructure failure is a run with an error.
  RunResult run_one(const Scenario& s, const fs::path& dir) {
    try {
      return run_cell_(s, name_, s.seed, dir);
    } catch (const std::exception& e) {
      RunResult failed;
      failed.algorithm = name_;
      failed.error = e.what();
      return failed;
    }
  }

  void explore_runs() {
    std::atomic<uint64_t> next{0};
    auto worker = [&] {
      for (uint64_t index = run_index(options_.shard, next++); budget_left(index);
           index = run_index(options_.shard, next++)) {
        Scenario s = generate(options_.space, options_.seed, index);
        const fs::path dir = options_.out_dir / "runs" / ("run-" + std::to_string(index));
        fs::remove_all(dir);
        const auto began = Clock::now();
        RunResult run = run_one(s, dir);
        const double seconds = std::chrono::duration<double>(Clock::now() - began).count();
        record(index, s, run, seconds, dir);
      }
    };
    std::vector<std::thread> workers;
    for (int j = 0; j < std::max(1, options_.jobs); ++j) workers.emplace_back(worker);
    for (auto& w : workers) w.join();
    progress_line(true);
  }

  void record(uint64_t index, const Scenario& s, const RunResult& run, double seconds,
              const fs::path& dir) {
    const std::vector<std::string> kinds = sought_found(run, options_.kinds);
    if (!kinds.empty()) {
      write_file_atomically(dir / "scenario.json", scenario_to_json(s).dump(2) + "\n");
      write_file_atomically(dir / "results.json",
                            results_of(s, s.seed, {run}).to_json().dump(2) + "\n");
    } else {
      std::error_code ignored;
      fs::remove_all(dir, ignored);  // only runs that broke the lock are kept
    }
    std::lock_guard lock(mutex_);
    ExploredRun entry{.index = index,
                      .seed = s.seed,
                      .verdict = run.verdict,
                      .kinds = run.check ? run.check->found_kinds() : std::vector<std::string>{},
                      .seconds = std::round(seconds * 1000) / 1000,
                      .exercised = run.exercised};
    for (size_t i = 0; i < s.faults.size(); ++i) {
      ExploredFault f = ExploredFault::of(s.faults[i]);
      f.fired = i < run.faults.size() && run.faults[i].fired;
      entry.faults.push_back(f);
    }
    entry.error = run.error;
    if (!kinds.empty()) entry.dir = fs::relative(dir, options_.out_dir).string();
    runs_.push_back(entry);
    if (run.error) {
      ++errors_;
      if (first_error_.empty()) first_error_ = *run.error;
      // Nothing runs at all (no redis-server, an adapter that never starts): say so, stop.
      if (completed_ == 0 && errors_ >= std::max(3, options_.jobs + 1)) abort_ = true;
    } else {
      ++completed_;
      coverage_.add(s, run);
    }
    for (const auto& k : kinds) ++violations_by_kind_[k];
    if (run.check)
      for (const auto& k : run.check->found_kinds()) ++kinds_seen_[k];
    if (!kinds.empty()) broken_.push_back({index, s, kinds, fault_kind_set(s)});
    progress_line(false);
  }

  // Caller holds mutex_ (or the workers are done).
  void progress_line(bool final) {
    const auto now = Clock::now();
    if (!final && now - last_progress_ < std::chrono::seconds(5)) return;
    last_progress_ = now;
    const double minutes = std::chrono::duration<double>(now - start_).count() / 60.0;
    std::ostringstream line;
    line << "explore " << name_ << ": " << runs_.size() << " runs";
    if (minutes > 0) line << " (" << std::llround(double(runs_.size()) / minutes) << "/min)";
    line << "; violations: ";
    if (violations_by_kind_.empty()) line << "none";
    for (auto it = violations_by_kind_.begin(); it != violations_by_kind_.end(); ++it)
      line << (it == violations_by_kind_.begin() ? "" : ", ") << it->first << " " << it->second;
    line << "; fired/generated: " << (coverage_.line().empty() ? "-" : coverage_.line());
    if (errors_) line << "; " << errors_ << " failed";
    *options_.progress << line.str() << std::endl;
  }

  // Whether a run of `s` broke the lock with one of `sought`.
  bool breaks(const Scenario& s, const std::vector<std::string>& sought) {
    TempDir dir("locklab-explore");
    RunResult run = run_one(s, dir.path());
    std::lock_guard lock(mutex_);
    ++shrink_runs_;
    return meet(sought_found(run, options_.kinds), sought);
  }

  void shrink_findings() {
    if (broken_.empty() || abort_) return;
    // Distinct by (kinds, fault kinds); each group is shrunk from its smallest
    // run, the groups with the fewest fault kinds first.
    std::map<std::pair<std::vector<std::string>, std::vector<std::string>>, std::vector<Broken*>>
        by_key;
    for (auto& b : broken_) by_key[{b.kinds, b.fault_kinds}].push_back(&b);
    std::vector<std::vector<Broken*>> groups;
    for (auto& [key, members] : by_key) {
      std::sort(members.begin(), members.end(), [](auto* a, auto* b) {
        return scenario_size(a->scenario) < scenario_size(b->scenario);
      });
      groups.push_back(members);
    }
    std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
      return std::make_pair(a[0]->fault_kinds.size(), scenario_size(a[0]->scenario)) <
             std::make_pair(b[0]->fault_kinds.size(), scenario_size(b[0]->scenario));
    });
    // Shrinking takes at most as long as exploring did (at least 3 minutes).
    const auto deadline = Clock::now() + std::max<std::chrono::seconds>(
                                             std::chrono::seconds(180),
                                             std::chrono::seconds(int64_t(explore_seconds_)));
    for (const auto& group : groups) {
      const Broken& b = *group[0];
      if (Finding* same = same_cause(b.kinds, b.fault_kinds)) {
        fold(*same, group);
        continue;
      }
      const char* why = stopping()                                    ? "interrupted"
                        : int(findings_.size()) >= options_.max_found ? "max_found reached"
                        : Clock::now() >= deadline                    ? "shrink time spent"
                                                                      : nullptr;
      if (why) {
        not_shrunk_.push_back({.run = b.index,
                               .runs = int64_t(group.size()),
                               .kinds = b.kinds,
                               .fault_kinds = b.fault_kinds,
                               .why = why});
        continue;
      }
      // A run that broke once by a rare coincidence is not shrunk: every step
      // of the shrink would be measured against a failure that does not recur.
      const Reproduction again =
          reproduce(b.scenario, options_.reruns, options_.needed, options_.jobs,
                    [&](const Scenario& s, int) { return breaks(s, b.kinds); });
      if (!again.reproduced) {
        not_shrunk_.push_back({.run = b.index,
                               .runs = int64_t(group.size()),
                               .kinds = b.kinds,
                               .fault_kinds = b.fault_kinds,
                               .why = "broke once, then in " + std::to_string(again.broke) +
                                      " of " + std::to_string(again.runs) +
                                      " reruns: too rare to shrink (its scenario: runs/run-" +
                                      std::to_string(b.index) + "/scenario.json)"});
        continue;
      }
      Finding f = shrink_one(
          b, std::min(options_.shrink_time,
                      std::chrono::duration_cast<std::chrono::seconds>(deadline - Clock::now())));
      if (Finding* same = same_cause(f.sought, f.fault_kinds)) {
        fold(*same, group);  // shrunk to a cause already found
        continue;
      }
      findings_.push_back(std::move(f));
      fold(findings_.back(), {group.begin() + 1, group.end()});
    }
    for (auto& f : findings_) write_finding(f);
  }

  // A finding whose minimal faults are among `fault_kinds` and that broke with a kind of `kinds`.
  Finding* same_cause(const std::vector<std::string>& kinds,
                      const std::vector<std::string>& fault_kinds) {
    for (auto& f : findings_)
      if (meet(f.sought, kinds) && subset(f.fault_kinds, fault_kinds)) return &f;
    return nullptr;
  }

  // The generated runs of `group` count as `into`'s: the same kinds from the same faults.
  static void fold(Finding& into, const std::vector<Broken*>& group) {
    for (const Broken* b : group) into.same_cause_runs.push_back(b->index);
  }

  Finding shrink_one(const Broken& b, std::chrono::seconds max_time) {
    *options_.progress << "explore: shrinking run " << b.index << " (" << joined(b.kinds, ", ")
                       << "; faults: " << joined(b.fault_kinds, ", ") << ")" << std::endl;
    Finding f;
    f.from_run = b.index;
    f.original_faults = b.scenario.faults.size();
    f.sought = b.kinds;
    ShrinkOptions shrink_options;
    shrink_options.reruns = options_.reruns;
    shrink_options.needed = options_.needed;
    shrink_options.parallel = options_.jobs;
    shrink_options.max_candidates = options_.shrink_candidates;
    shrink_options.max_time = max_time;
    shrink_options.stop = options_.stop;
    f.shrink = shrink(
        b.scenario, [&](const Scenario& s, int) { return breaks(s, b.kinds); }, shrink_options);
    f.minimal = f.shrink.minimal;
    f.fault_kinds = fault_kind_set(f.minimal);
    *options_.progress << "explore: run " << b.index << " shrunk to " << f.minimal.faults.size()
                       << " fault(s), " << f.minimal.clients << " clients, "
                       << f.minimal.duration_ms << " ms (" << f.shrink.candidates_tried
                       << " candidates, " << f.shrink.runs << " runs)" << std::endl;
    return f;
  }

  std::string finding_name(const std::vector<std::string>& kinds,
                           const std::vector<std::string>& fault_kinds) {
    std::string base = name_ + "-" + joined(kinds, "-") + "-" +
                       (fault_kinds.empty() ? std::string("no-fault") : joined(fault_kinds, "-"));
    std::string name = reports::slug(base);
    for (int n = 2; used_names_.count(name); ++n)
      name = reports::slug(base) + "-" + std::to_string(n);
    used_names_.insert(name);
    return name;
  }

  // Measures the reproduction rate, then writes found/<name>.json and found/<name>/.
  void write_finding(Finding& f) {
    const int confirm = stopping() ? 0 : options_.confirm_runs;
    std::vector<std::unique_ptr<TempDir>> dirs;
    std::vector<RunResult> runs;
    for (int done = 0; done < confirm && !stopping();) {
      const int batch = std::min(std::max(1, options_.jobs), confirm - done);
      std::vector<std::future<RunResult>> pending;
      for (int k = 0; k < batch; ++k) {
        dirs.push_back(std::make_unique<TempDir>("locklab-explore"));
        pending.push_back(std::async(std::launch::async, [this, &f, dir = dirs.back()->path()] {
          return run_one(f.minimal, dir);
        }));
      }
      for (auto& p : pending) runs.push_back(p.get());
      done += batch;
    }
    std::optional<std::vector<std::string>> common;  // kinds found in every violating run
    std::set<std::string> any;
    std::optional<size_t> first;
    for (size_t k = 0; k < runs.size(); ++k) {
      const std::vector<std::string> kinds = sought_found(runs[k], options_.kinds);
      if (!meet(kinds, f.sought)) continue;
      ++f.confirm_broke;
      if (!first) first = k;
      any.insert(kinds.begin(), kinds.end());
      if (!common) {
        common = kinds;
      } else {
        std::vector<std::string> both;
        std::set_intersection(common->begin(), common->end(), kinds.begin(), kinds.end(),
                              std::back_inserter(both));
        common = both;
      }
    }
    f.confirm_runs = int(runs.size());
    f.kinds = {any.begin(), any.end()};
    // Named by what it reliably shows: the kinds every breaking run found.
    f.name = finding_name(common && !common->empty() ? *common : f.sought, f.fault_kinds);
    const fs::path found = options_.out_dir / "found";
    const fs::path report_dir = found / f.name;
    fs::remove_all(report_dir);
    fs::create_directories(found);

    Scenario& m = f.minimal;
    m.name = f.name;
    const std::string rate =
        std::to_string(f.confirm_broke) + " of " + std::to_string(f.confirm_runs) + " runs";
    m.description =
        "Found by locklab explore (seed " + std::to_string(options_.seed) + ", run " +
        std::to_string(f.from_run) + "), shrunk from " + std::to_string(f.original_faults) +
        " fault(s) to " + std::to_string(m.faults.size()) + ": " + name_ + " shows " +
        joined(f.sought, ", ") + " with " +
        (f.fault_kinds.empty() ? std::string("no fault at all") : joined(f.fault_kinds, ", ")) +
        ". `locklab run` reproduced it in " + rate + ".";
    Expectation e;
    e.verdict = Verdict::Violated;
    if (common) e.kinds = *common;
    e.why = "reproduced in " + rate + " (locklab explore)";
    m.expectations[options_.space.algorithm] = e;
    if (options_.external) m.default_expectation = e;
    write_file_atomically(found / (f.name + ".json"), scenario_to_json(m).dump(2) + "\n");

    if (first) {
      fs::create_directories(report_dir);
      const fs::path from = dirs[*first]->path();
      for (const auto& entry : fs::directory_iterator(from))
        fs::copy(entry.path(), report_dir / entry.path().filename(),
                 fs::copy_options::recursive | fs::copy_options::overwrite_existing);
      write_file_atomically(report_dir / "results.json",
                            results_of(m, m.seed, {runs[*first]}).to_json().dump(2) + "\n");
      try {
        reports::write_run_report(report_dir);
      } catch (const std::exception& e) {
        *options_.progress << "locklab: warning: report of " << f.name
                           << " not written: " << e.what() << std::endl;
      }
    }
    *options_.progress << "explore: found " << f.name << ": " << rate << std::endl;
  }

  Exploration document_of(const std::string& started_at) const {
    const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    const std::vector<FaultKind> allowed = drawn_kinds(options_.space);
    const std::vector<std::string> steps = coverable_steps(options_.space);
    Exploration document;
    for (const auto& f : findings_) {
      FoundScenario found{.name = f.name,
                          .file = "found/" + f.name + ".json",
                          .report = f.confirm_broke
                                        ? std::optional("found/" + f.name + "/report.html")
                                        : std::nullopt,
                          .kinds = f.kinds,
                          .sought = f.sought,
                          .fault_kinds = f.fault_kinds,
                          .clients = f.minimal.clients,
                          .duration_ms = f.minimal.duration_ms,
                          .ttl_ms = f.minimal.workload.ttl_ms,
                          .from_run = f.from_run,
                          .original_faults = int64_t(f.original_faults),
                          .same_cause_runs = f.same_cause_runs,
                          .reproduced = {.runs = f.confirm_runs, .broke = f.confirm_broke},
                          .shrink = {.candidates_tried = f.shrink.candidates_tried,
                                     .runs = f.shrink.runs,
                                     .steps_taken = f.shrink.steps_taken,
                                     .complete = f.shrink.complete}};
      for (const Fault& fault : f.minimal.faults) found.faults.push_back(ExploredFault::of(fault));
      document.found.push_back(std::move(found));
    }
    const double minutes = explore_seconds_ / 60.0;
    document.explore = name_;
    document.algorithm = options_.space.algorithm;
    document.locklab_version = kVersion;
    document.invocation = options_.invocation;
    document.started_at = started_at;
    document.seconds = std::round(seconds * 10) / 10;
    document.explore_seconds = std::round(explore_seconds_ * 10) / 10;
    document.interrupted = stopping();
    RecordedOptions& o = document.options;
    o.seed = options_.seed;
    o.jobs = options_.jobs;
    o.shard = std::to_string(options_.shard.index) + "/" + std::to_string(options_.shard.count);
    o.max_runs = options_.max_runs;
    o.max_seconds = options_.max_time.count();
    o.kinds = options_.kinds;
    for (FaultKind k : allowed) o.fault_kinds.push_back(std::string(info(k).name));
    o.lock_steps = options_.space.lock_steps;
    o.max_faults = options_.space.max_faults;
    if (!options_.space.network.empty()) o.network = options_.space.network;
    o.reproduce = {.needed = options_.needed, .reruns = options_.reruns};
    o.confirm_runs = options_.confirm_runs;
    document.runs_total = int64_t(runs_.size());
    document.runs_failed = errors_;
    document.runs_per_minute =
        minutes > 0 ? std::round(double(runs_.size()) / minutes * 10) / 10 : 0;
    document.shrink_runs = shrink_runs_;
    document.violations_by_kind = violations_by_kind_;
    document.kinds_seen = kinds_seen_;
    document.coverage = coverage_.summary(allowed, steps);
    document.not_shrunk = not_shrunk_;
    document.runs = sorted_runs();
    if (options_.external) document.adapter = options_.external->adapter->command;
    document.exit_status = findings_.empty() && not_shrunk_.empty() ? 0 : 1;
    if (abort_ || (completed_ == 0 && errors_ > 0)) {
      document.error = "no run could be made: " + first_error_;
      document.exit_status = 2;
    }
    return document;
  }

  // Every run, by index (they end in any order).
  std::vector<ExploredRun> sorted_runs() const {
    std::vector<ExploredRun> runs = runs_;
    std::sort(runs.begin(), runs.end(),
              [](const ExploredRun& a, const ExploredRun& b) { return a.index < b.index; });
    return runs;
  }

  const ExploreOptions& options_;
  const CellRunner& run_cell_;
  const std::string name_;
  Clock::time_point start_;
  double explore_seconds_ = 0;  // the generated runs' part of the time, without shrinking
  Clock::time_point last_progress_{};
  std::mutex mutex_;
  std::vector<ExploredRun> runs_;
  int64_t errors_ = 0, completed_ = 0, shrink_runs_ = 0;
  std::string first_error_;
  std::atomic<bool> abort_{false};
  Coverage coverage_;
  std::map<std::string, int64_t> violations_by_kind_;  // sought kinds: runs that found each
  std::map<std::string, int64_t> kinds_seen_;          // every kind, sought or not
  std::vector<Broken> broken_;
  std::vector<Finding> findings_;
  std::vector<NotShrunk> not_shrunk_;
  std::set<std::string> used_names_;
};

}  // namespace

uint64_t run_index(const Shard& shard, uint64_t k) {
  return k * uint64_t(shard.count) + uint64_t(shard.index - 1);
}

void validate(const ExploreOptions& options) {
  if (!options.max_runs && options.max_time.count() <= 0)
    throw std::invalid_argument("--minutes/--runs: no budget to explore with");
  if (options.max_runs && *options.max_runs < 1)
    throw std::invalid_argument("--runs: must be at least 1");
  if (options.jobs < 1) throw std::invalid_argument("--jobs: must be at least 1");
  if (options.reruns < 1 || options.needed < 1 || options.needed > options.reruns)
    throw std::invalid_argument("--reproduce: needs K/N with 1 <= K <= N, got " +
                                std::to_string(options.needed) + "/" +
                                std::to_string(options.reruns));
  if (options.confirm_runs < 1) throw std::invalid_argument("--confirm-runs: must be at least 1");
  for (const auto& k : options.kinds)
    if (!violation_kind_named(k))
      throw std::invalid_argument("--kinds: unknown violation kind \"" + k +
                                  "\" (known: " + violation_kind_list() + ")");
}

Exploration run_explore(const ExploreOptions& options, const CellRunner& run_cell) {
  validate(options);
  return Explorer(options, run_cell).run();
}

}  // namespace locklab::explore
