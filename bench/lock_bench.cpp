// How fast the lab drives locks, against what the same Redis server can do
// in the same run, and what a run costs in memory:
//
//   lock_bench throughput [--algorithms a,b] [--clients 1,8,32,64] [--seconds S] [--pairs P]
//                         [--pin on|off] [--json FILE]
//       Each algorithm on a fresh cluster of real redis-servers (one node;
//       redlock five), N clients in acquire/release loops on a lock each, no
//       work, no think time; the Redis commands the clients sent per second
//       (counted as they send them; a server would count a script's own calls
//       too). Then, against the same server and with the
//       same N, redis-benchmark doing what a set-nx-px operation does: SET
//       key value NX PX, and EVALSHA of the lab's release script. The ratio
//       is lab / redis-benchmark, the two commands mixed one to one. Each
//       point is P such pairs in a row (default 5), lab and redis-benchmark
//       taking turns on the same server: the median ratio with its least and
//       largest, the load average before and after each pair, and where the
//       time went (CPU per command of the lab and of redis-server, context
//       switches per command); a point whose ratios spread by more than
//       kSteadySpread of their median is flagged unsteady.
//   lock_bench recording [--clients N] [--seconds S] [--rounds R] [--pin on|off] [--json FILE]
//       set-nx-px with the history recorded, and with nothing recorded,
//       R rounds of a pair taking turns; the overhead is the median round's
//       1 - recorded / not recorded (acquisitions per second), with the
//       least and largest, and the lab's CPU per acquisition in each.
//       Under `valgrind --tool=callgrind` each loop is also a profile of
//       its own, labelled "recorded" or "not recorded" and holding only the
//       loop's instructions: instructions per acquisition move by about a
//       per cent from run to run where CPU seconds move by tens (bench/run.sh).
//   lock_bench memory --seconds S [--clients N] [--json FILE]
//       One recorded run of set-nx-px: its events and the process's peak
//       resident memory (run it in a fresh process per length).
//
// --pin on puts this process (and all it starts but node 0's server) on the
// last CPU and node 0's redis-server on the first (see `pinned`).
//
// A benchmark, not a test: nothing here asserts on time. Every server is
// started here on a free loopback port and stopped with its run.
#include <sched.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(label)
#endif

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cluster.h"
#include "compare_and_delete_text.h"
#include "hiredis_connection.h"
#include "lock.h"
#include "process.h"
#include "runner.h"
#include "temp_dir.h"

namespace {

using nlohmann::json;
using namespace locklab;

struct Options {
  std::vector<std::string> algorithms;
  std::vector<int> clients = {1, 8, 32, 64};
  double seconds = 3;
  int rounds = 3;
  int pairs = 5;
  std::string json_file;
};

// Pairs of one point whose ratios spread by more than this fraction of
// their median measured the machine's neighbours as much as the lab: the
// point is flagged unsteady, its median the figure to quote with its spread.
constexpr double kSteadySpread = 0.15;

// --pin: the lab (and whatever it starts, redis-benchmark too) on the last
// CPU, node 0's redis-server on the first. Left to the scheduler, the
// client and the server it wakes are often put on one CPU, the other idle,
// and the rate of a run then depends on where they happened to land.
bool pinned = false;

void pin(pid_t pid, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(pid, sizeof set, &set) != 0)
    throw std::runtime_error("cannot pin process " + std::to_string(pid) + " to CPU " +
                             std::to_string(cpu) + ": " + std::strerror(errno));
}
void pin_to_first_cpu(pid_t pid) {
  pin(pid, 0);
}

// The 1-minute load average, as /proc/loadavg says.
double load_average() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return load;
}

// CPU seconds (user + system) a process has used, from /proc/PID/stat.
double process_cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stod(field);
    if (i == 15) {
      stime = std::stod(field);
      break;
    }
  }
  return (utime + stime) / double(sysconf(_SC_CLK_TCK));
}

// This process's CPU seconds and context switches so far.
struct Usage {
  double cpu = 0, system = 0;  // CPU seconds: user + system, and system alone
  int64_t voluntary = 0, involuntary = 0;
};
Usage self_usage() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return {seconds(u.ru_utime) + seconds(u.ru_stime), seconds(u.ru_stime), u.ru_nvcsw, u.ru_nivcsw};
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

Scenario loop_scenario(const std::string& algorithm, int clients, double seconds) {
  Scenario s;
  s.name = "lock-loop";
  s.clients = clients;
  s.duration_ms = int64_t(seconds * 1000);
  s.algorithms = {algorithm};
  s.workload.locks.clear();
  for (int i = 1; i <= clients; ++i) s.workload.locks.push_back("bench-lock-" + std::to_string(i));
  s.workload.lock_per_client = true;
  s.workload.ttl_ms = 10'000;
  s.workload.wait_ms = 1000;
  s.workload.work_ms = 0;
  s.workload.think_ms = 0;
  s.workload.ops_per_client = 10'000'000;
  return s;
}

// redis-benchmark's requests per second for `command` with `clients`
// connections, about `seconds` long, read from its CSV output.
double redis_benchmark(const Endpoint& server, int clients, const std::vector<std::string>& command,
                       double expected_rate, double seconds, const std::filesystem::path& dir) {
  const int64_t requests = std::max<int64_t>(5000, int64_t(expected_rate * seconds));
  const auto output = dir / "redis-benchmark.csv";
  ProcessSpec spec;
  spec.argv = {"redis-benchmark",
               "-h",
               server.host,
               "-p",
               std::to_string(server.port),
               "-c",
               std::to_string(clients),
               "-n",
               std::to_string(requests),
               "-r",
               "1000000",
               "--csv"};
  spec.argv.insert(spec.argv.end(), command.begin(), command.end());
  spec.output = output;
  ChildProcess child(spec);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::optional<int> status;
  while (!(status = child.poll())) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("redis-benchmark ran longer than 120 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ifstream in(output);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The last line: "test","rps","avg_latency_ms",… → "<command>","<rps>",…
  auto end = text.find_last_not_of("\r\n");
  auto start = text.rfind('\n', end);
  std::string line = text.substr(start == std::string::npos ? 0 : start + 1);
  auto q1 = line.find("\",\"");
  if (*status != 0 || q1 == std::string::npos)
    throw std::runtime_error("redis-benchmark failed (status " + std::to_string(*status) +
                             "): " + text.substr(0, 300));
  return std::stod(line.substr(q1 + 3));
}

struct LoopResult {
  double seconds = 0;
  int64_t commands = 0;
  int64_t acquisitions = 0;
  int64_t events = 0;
  double baseline_commands_per_s = 0;  // redis-benchmark's, 0 when not measured
  double set_per_s = 0, evalsha_per_s = 0;
  // Where the loop's time went: CPU seconds of the lab process and of
  // node 0's redis-server, and the lab's context switches, during the loop.
  double lab_cpu = 0, lab_system_cpu = 0, server_cpu = 0;
  int64_t voluntary_switches = 0, involuntary_switches = 0;
};

LoopResult run_loop(const std::string& algorithm, int clients, double seconds, bool record,
                    bool baseline, bool proxied = false) {
  Scenario scenario = loop_scenario(algorithm, clients, seconds);
  TempDir dir("locklab-bench");
  LoopResult result;
  std::chrono::steady_clock::time_point started;
  Usage usage_before;
  double server_before = 0;
  RunProbe probe;
  probe.record_history = record;
  probe.started = [&](Cluster& cluster) {
    if (pinned) pin_to_first_cpu(cluster.server(0).pid());
    server_before = process_cpu_seconds(cluster.server(0).pid());
    usage_before = self_usage();
    started = std::chrono::steady_clock::now();
    CALLGRIND_ZERO_STATS;
  };
  probe.finished = [&](Cluster& cluster) {
    CALLGRIND_DUMP_STATS_AT(record ? "recorded" : "not recorded");
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const Usage usage = self_usage();
    result.lab_cpu = usage.cpu - usage_before.cpu;
    result.lab_system_cpu = usage.system - usage_before.system;
    result.voluntary_switches = usage.voluntary - usage_before.voluntary;
    result.involuntary_switches = usage.involuntary - usage_before.involuntary;
    result.server_cpu = process_cpu_seconds(cluster.server(0).pid()) - server_before;
    result.commands = probe.commands;
    if (!baseline) return;
    const Endpoint server = cluster.server(0).endpoint();
    HiredisConnection connection(server);
    const std::string sha =
        connection.command({"SCRIPT", "LOAD", std::string(scripts::compare_and_delete)}).str;
    const std::string value(32, 'v');  // about the size of a lab owner value
    const double guess = double(result.commands) / std::max(result.seconds, 0.001);
    result.set_per_s =
        redis_benchmark(server, clients, {"SET", "bench:__rand_int__", value, "NX", "PX", "10000"},
                        guess, seconds / 2, dir.path());
    result.evalsha_per_s =
        redis_benchmark(server, clients, {"EVALSHA", sha, "1", "bench:__rand_int__", value}, guess,
                        seconds / 2, dir.path());
    // One of each per lock operation: the mix takes the sum of their times.
    result.baseline_commands_per_s = 2 / (1 / result.set_per_s + 1 / result.evalsha_per_s);
  };
  const LockUnderTest lock = LockUnderTest::built_in(algorithm);
  PlannedRun planned = plan_run(scenario, lock, Servers{}, 1);
  if (!planned.plan) throw std::runtime_error(algorithm + ": " + planned.not_applicable);
  // Through fault proxies even without a link fault: what a proxy hop costs.
  if (proxied) planned.plan->shape.client_links = true;
  RunResult run = run_plan(*planned.plan, planned.expected, lock, Servers{}, 1, dir.path(), &probe);
  if (run.error) throw std::runtime_error(algorithm + ": " + *run.error);
  if (record && run.verdict != Verdict::Safe)
    throw std::runtime_error(algorithm + ": the benchmark's run was " +
                             std::string(verdict_name(run.verdict)));
  if (run.stats) {
    result.acquisitions = run.stats->acquires_ok;
    result.events = run.stats->events;
  }
  return result;
}

void write_json(const Options& options, const json& document) {
  std::cout << std::flush;
  if (options.json_file.empty()) return;
  std::ofstream out(options.json_file);
  out << document.dump(2) << "\n";
  if (!out) throw std::runtime_error("cannot write " + options.json_file);
}

int throughput(const Options& options) {
  std::vector<std::string> algorithms = options.algorithms;
  if (algorithms.empty())
    for (const auto& info : locklab::algorithms()) algorithms.push_back(info.id);
  // set-nx-px first: redlock's acquisitions are compared with its.
  std::stable_partition(algorithms.begin(), algorithms.end(),
                        [](const std::string& a) { return a == "set-nx-px"; });
  json rows = json::array();
  std::map<int, double> single_node_acquisitions;  // set-nx-px, per client count
  std::printf("%-26s %7s %12s %14s %7s %12s\n", "algorithm", "clients", "lab cmd/s", "bench cmd/s",
              "median ratio", "acquires/s");
  for (const auto& algorithm : algorithms)
    for (int clients : options.clients) {
      // Pairs in a row, lab then redis-benchmark on the same server each.
      std::vector<std::pair<double, LoopResult>> measured;
      json pairs = json::array();
      for (int p = 0; p < std::max(1, options.pairs); ++p) {
        const double load_before = load_average();
        LoopResult pair = run_loop(algorithm, clients, options.seconds, true, true);
        const double ratio = double(pair.commands) / pair.seconds / pair.baseline_commands_per_s;
        const double commands = double(std::max<int64_t>(pair.commands, 1));
        pairs.push_back(
            {{"ratio", std::round(ratio * 1000) / 1000},
             {"lab_commands_per_s", std::round(double(pair.commands) / pair.seconds)},
             {"redis_benchmark_commands_per_s", std::round(pair.baseline_commands_per_s)},
             {"load_before", load_before},
             {"load_after", load_average()},
             {"lab_cpu_us_per_command", std::round(pair.lab_cpu / commands * 1e7) / 10},
             {"lab_kernel_cpu_us_per_command",
              std::round(pair.lab_system_cpu / commands * 1e7) / 10},
             {"server_cpu_us_per_command", std::round(pair.server_cpu / commands * 1e7) / 10},
             {"lab_cpu_cores", std::round(pair.lab_cpu / pair.seconds * 100) / 100},
             {"server_cpu_cores", std::round(pair.server_cpu / pair.seconds * 100) / 100},
             {"context_switches_per_command",
              std::round(double(pair.voluntary_switches + pair.involuntary_switches) / commands *
                         100) /
                  100}});
        measured.emplace_back(ratio, pair);
      }
      std::vector<std::pair<double, LoopResult>> sorted = measured;
      std::sort(sorted.begin(), sorted.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      // The median pair stands for the point (the lower middle one of an even count).
      const LoopResult& r = sorted[(sorted.size() - 1) / 2].second;
      const double median_ratio = sorted[(sorted.size() - 1) / 2].first;
      const double min_ratio = sorted.front().first, max_ratio = sorted.back().first;
      const double lab = double(r.commands) / r.seconds;
      const double acquisitions = double(r.acquisitions) / r.seconds;
      if (algorithm == "set-nx-px") single_node_acquisitions[clients] = acquisitions;
      json row = {{"algorithm", algorithm},
                  {"clients", clients},
                  {"lab_commands_per_s", std::round(lab)},
                  {"redis_benchmark_commands_per_s", std::round(r.baseline_commands_per_s)},
                  {"redis_benchmark_set_nx_px_per_s", std::round(r.set_per_s)},
                  {"redis_benchmark_evalsha_per_s", std::round(r.evalsha_per_s)},
                  {"ratio", std::round(median_ratio * 1000) / 1000},
                  {"median_ratio", std::round(median_ratio * 1000) / 1000},
                  {"min_ratio", std::round(min_ratio * 1000) / 1000},
                  {"max_ratio", std::round(max_ratio * 1000) / 1000},
                  {"pairs", measured.size()},
                  {"pinned", pinned},
                  {"unsteady", (max_ratio - min_ratio) > kSteadySpread * median_ratio},
                  {"pair_runs", pairs},
                  {"acquisitions_per_s", std::round(acquisitions)},
                  {"seconds", r.seconds}};
      if (algorithm == "set-nx-px") {
        // What a run with link faults costs: every command crosses a fault proxy.
        LoopResult p = run_loop(algorithm, clients, options.seconds, true, false, true);
        const double proxied = double(p.commands) / p.seconds;
        row["via_fault_proxies_commands_per_s"] = std::round(proxied);
        row["via_fault_proxies_ratio"] =
            std::round(proxied / r.baseline_commands_per_s * 1000) / 1000;
      }
      if (algorithm == "redlock" && single_node_acquisitions.count(clients))
        row["acquisitions_vs_single_node"] =
            std::round(acquisitions / single_node_acquisitions[clients] * 1000) / 1000;
      std::printf("%-26s %7d %12.0f %14.0f %7.2f %12.0f   (%zu pairs: %.2f-%.2f%s)",
                  algorithm.c_str(), clients, lab, r.baseline_commands_per_s, median_ratio,
                  acquisitions, measured.size(), min_ratio, max_ratio,
                  row["unsteady"] == true ? ", UNSTEADY" : "");
      if (row.contains("via_fault_proxies_ratio"))
        std::printf("   (via fault proxies: %.0f cmd/s, ratio %.2f)",
                    row["via_fault_proxies_commands_per_s"].get<double>(),
                    row["via_fault_proxies_ratio"].get<double>());
      if (row.contains("acquisitions_vs_single_node"))
        std::printf("   (%.2f of set-nx-px's acquisitions/s)",
                    row["acquisitions_vs_single_node"].get<double>());
      std::printf("\n");
      std::fflush(stdout);
      rows.push_back(row);
    }
  write_json(options, {{"lock_throughput", rows}});
  return 0;
}

int recording(const Options& options) {
  const int clients = options.clients.empty() ? 32 : options.clients.front();
  // Rounds of a pair, the two loops taking turns (which goes first
  // alternates, so a drift of the machine favours neither): the overhead is
  // the median round's 1 - recorded / not recorded.
  // Beside the rates, the lab's own CPU time per acquisition in each loop:
  // what recording costs the lab, which a busy neighbour moves far less than
  // it moves a rate (the rate falls by that cost only while the lab's one
  // thread is the bottleneck).
  std::vector<double> recorded, bare, overheads, cpu_overheads;
  for (int round = 0; round < options.rounds; ++round) {
    double rates[2] = {0, 0};   // [recorded, not recorded]
    double cpu_us[2] = {0, 0};  // lab CPU µs per acquisition, the same
    double sys_us[2] = {0, 0};  // of which in the kernel
    int64_t acquisitions[2] = {0, 0};
    for (int turn = 0; turn < 2; ++turn) {
      const bool record = (turn == 0) == (round % 2 == 0);
      LoopResult r = run_loop("set-nx-px", clients, options.seconds, record, false);
      rates[record ? 0 : 1] = double(r.acquisitions) / r.seconds;
      acquisitions[record ? 0 : 1] = r.acquisitions;
      cpu_us[record ? 0 : 1] = r.lab_cpu * 1e6 / double(std::max<int64_t>(r.acquisitions, 1));
      sys_us[record ? 0 : 1] =
          r.lab_system_cpu * 1e6 / double(std::max<int64_t>(r.acquisitions, 1));
    }
    recorded.push_back(rates[0]);
    bare.push_back(rates[1]);
    overheads.push_back(1 - rates[0] / rates[1]);
    cpu_overheads.push_back(cpu_us[0] / cpu_us[1] - 1);
    std::printf(
        "round %d: recorded %.0f, not recorded %.0f acquisitions/s: overhead %.1f %%; lab CPU "
        "%.2f vs %.2f µs per acquisition (kernel %.2f vs %.2f): %+.1f %%; %" PRId64 " vs %" PRId64
        " acquisitions\n",
        round + 1, rates[0], rates[1], overheads.back() * 100, cpu_us[0], cpu_us[1], sys_us[0],
        sys_us[1], cpu_overheads.back() * 100, acquisitions[0], acquisitions[1]);
    std::fflush(stdout);
  }
  auto median_of = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return std::array<double, 3>{values[(values.size() - 1) / 2], values.front(), values.back()};
  };
  const auto [median, least, most] = median_of(overheads);
  const auto [cpu_median, cpu_least, cpu_most] = median_of(cpu_overheads);
  std::printf(
      "set-nx-px, %d clients: recording overhead %.1f %% (median of %zu rounds; %.1f to %.1f %%); "
      "lab CPU per acquisition %+.1f %% (%.1f to %.1f %%)\n",
      clients, median * 100, overheads.size(), least * 100, most * 100, cpu_median * 100,
      cpu_least * 100, cpu_most * 100);
  std::vector<double> sorted = overheads;
  std::sort(sorted.begin(), sorted.end());
  write_json(options, {{"recording_overhead", std::round(median * 1000) / 1000},
                       {"recording",
                        {{"algorithm", "set-nx-px"},
                         {"clients", clients},
                         {"rounds", sorted.size()},
                         {"pinned", pinned},
                         {"min_overhead", std::round(sorted.front() * 1000) / 1000},
                         {"max_overhead", std::round(sorted.back() * 1000) / 1000},
                         {"recorded_acquisitions_per_s", recorded},
                         {"not_recorded_acquisitions_per_s", bare},
                         {"lab_cpu_overhead", std::round(cpu_median * 1000) / 1000},
                         {"min_lab_cpu_overhead", std::round(cpu_least * 1000) / 1000},
                         {"max_lab_cpu_overhead", std::round(cpu_most * 1000) / 1000}}}});
  return 0;
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

int memory(const Options& options) {
  const int clients = options.clients.empty() ? 8 : options.clients.front();
  LoopResult r = run_loop("set-nx-px", clients, options.seconds, true, false);
  const double rss = peak_rss_mb();
  const double millions = double(r.events) / 1e6;
  std::printf(
      "set-nx-px, %d clients, %.0f s: %lld events, peak RSS %.1f MB (%.1f MB per million events)\n",
      clients, r.seconds, (long long)r.events, rss, rss / millions);
  write_json(options, {{"seconds", r.seconds},
                       {"clients", clients},
                       {"events", r.events},
                       {"peak_rss_mb", std::round(rss * 10) / 10},
                       {"peak_rss_mb_per_million_events", std::round(rss / millions * 10) / 10}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  install_termination_cleanup();
  if (argc < 2) {
    std::cerr << "usage: lock_bench throughput|recording|memory [options]\n";
    return 2;
  }
  const std::string command = argv[1];
  Options options;
  bool clients_given = false;
  try {
    for (int i = 2; i < argc; ++i) {
      const std::string flag = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      const std::string value = argv[++i];
      if (flag == "--algorithms") {
        options.algorithms = split(value);
      } else if (flag == "--clients") {
        options.clients.clear();
        for (const auto& c : split(value)) options.clients.push_back(std::stoi(c));
        clients_given = true;
      } else if (flag == "--seconds") {
        options.seconds = std::stod(value);
      } else if (flag == "--rounds") {
        options.rounds = std::stoi(value);
      } else if (flag == "--pairs") {
        options.pairs = std::stoi(value);
        if (options.pairs < 1) throw std::invalid_argument("--pairs must be at least 1");
      } else if (flag == "--pin") {
        pinned = value == "on";
        if (!pinned && value != "off") throw std::invalid_argument("--pin takes on or off");
      } else if (flag == "--json") {
        options.json_file = value;
      } else {
        throw std::invalid_argument("unknown option " + flag);
      }
    }
    if (!clients_given && command != "throughput") options.clients.clear();
    if (pinned) {
      const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
      if (cpus < 2) throw std::invalid_argument("--pin on needs two CPUs at least");
      pin(0, int(cpus - 1));  // this thread: every thread and process started later inherits it
    }
    if (command == "throughput") return throughput(options);
    if (command == "recording") return recording(options);
    if (command == "memory") return memory(options);
    std::cerr << "lock_bench: unknown command " << command << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "lock_bench " << command << ": " << e.what() << "\n";
    return 2;
  }
}
