// How fast the checkers go, end to end: generates a valid history of 10
// million events (a temp file, about 2 GB) and checks it with check_file(),
// parse included, on one core. Also measures the per-line parsers the
// checker path chose between, each checking the whole line: a DOM parse with
// nlohmann::json, simdjson's On-Demand API (reading every value, since it
// checks only what it reads; its kernel is chosen at compile time) and
// simdjson's DOM parser (kernel chosen at run time), which ViewReader uses.
//
//   checkers_bench [--events=N] [--history=PATH] [Google Benchmark flags]
//
// --history=PATH writes the generated history there and keeps it (to profile
// or to feed `locklab check`); by default it goes to a temp dir, removed after.
//
// Prints the events per second (wall clock and CPU time) and the peak memory
// of the process after the check, which stays small: the checker streams.
// A benchmark, not a test: nothing here asserts on time.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkers.h"
#include "reader.h"
#include "temp_dir.h"

#ifdef LOCKLAB_HAVE_SIMDJSON
#include <simdjson.h>
#endif

namespace {

using locklab::checkers::Results;

constexpr int64_t kTargetPerSecond = 2'000'000;
constexpr int64_t kParseLines = 1'000'000;  // the parser comparison reads this many lines

std::filesystem::path g_history;
int64_t g_events = 10'000'000;
Results g_results;

// --- The history ---------------------------------------------------------------

// A correct run: 8 clients take turns on 4 locks; while one holds a lock
// another tries it and fails; each holder writes the counter once. Fields as
// the runner records them. Ten events per turn, plus a nemesis event now and then.
void generate(const std::filesystem::path& path, int64_t events) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) throw std::runtime_error("cannot write " + path.string());
  std::vector<char> buffer(1 << 20);
  std::setvbuf(out, buffer.data(), _IOFBF, buffer.size());
  int64_t index = 0, time_ns = 0;
  int64_t tokens[4] = {}, counters[4] = {};
  auto line = [&](const char* process, const char* type, const char* f, int lock,
                  const std::string& rest) {
    if (index >= events) return;
    time_ns += 1000 + (index * 7919) % 40000;
    std::fprintf(out,
                 "{\"index\":%" PRId64 ",\"time_ns\":%" PRId64
                 ",\"process\":\"%s\",\"type\":\"%s\",\"f\":\"%s\",\"lock\":\"lock-%d\"%s,"
                 "\"client_time_ns\":%" PRId64 "}\n",
                 index, time_ns, process, type, f, lock, rest.c_str(), time_ns + 12345);
    ++index;
  };
  char owner[80], value[160];
  for (int64_t turn = 0; index < events; ++turn) {
    const int lock = int(turn % 4);
    const std::string holder = "c" + std::to_string(turn % 8 + 1);
    const std::string other = "c" + std::to_string((turn + 3) % 8 + 1);
    const int64_t token = ++tokens[lock];
    const int64_t read = counters[lock]++;
    std::snprintf(owner, sizeof owner, ",\"owner\":\"%016" PRIx64 "%016" PRIx64 "\"",
                  uint64_t(uint64_t(turn) * 0x9e3779b97f4a7c15u),
                  uint64_t(uint64_t(turn) ^ 0xdeadbeefu));
    const std::string acquire_ok = std::string(owner) + ",\"token\":" + std::to_string(token) +
                                   ",\"value\":{\"validity_ms\":2000,\"reentry\":1}";
    std::snprintf(value, sizeof value,
                  ",\"token\":%" PRId64 ",\"value\":{\"read\":%" PRId64 ",\"write\":%" PRId64 "}",
                  token, read, read + 1);
    line(holder.c_str(), "invoke", "acquire", lock,
         ",\"value\":{\"ttl_ms\":2000,\"wait_ms\":1000}");
    line(holder.c_str(), "ok", "acquire", lock, acquire_ok);
    line(other.c_str(), "invoke", "acquire", lock, ",\"value\":{\"ttl_ms\":2000,\"wait_ms\":1000}");
    line(other.c_str(), "fail", "acquire", lock, ",\"error\":\"held by another client\"");
    line(holder.c_str(), "invoke", "write", lock, value);
    line(holder.c_str(), "ok", "write", lock, value);
    line(holder.c_str(), "invoke", "release", lock, owner);
    line(holder.c_str(), "ok", "release", lock,
         std::string(owner) + ",\"value\":{\"result\":\"released\"}");
    if (turn % 500 == 0 && index < events) {
      time_ns += 1000;
      std::fprintf(out,
                   "{\"index\":%" PRId64 ",\"time_ns\":%" PRId64
                   ",\"process\":\"nemesis\",\"type\":\"info\",\"f\":\"delay\","
                   "\"value\":{\"phase\":\"%s\",\"targets\":[\"n1\"],\"delay_ms\":5}}\n",
                   index++, time_ns, turn % 1000 == 0 ? "start" : "end");
    }
  }
  // On disk before anything is measured: the kernel writing 2 GB back while
  // a benchmark reads the file would be measured too.
  if (std::fflush(out) != 0 || ::fdatasync(::fileno(out)) != 0 || std::fclose(out) != 0)
    throw std::runtime_error("cannot write " + path.string());
}

// --- Measuring ---------------------------------------------------------------------

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double peak_rss_mb() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) / 1024.0;
}

struct Timing {
  double wall = 0, cpu = 0;
};

// Runs `work` once per benchmark iteration and reports items per second by
// both clocks ("per_s_cpu" is the single-core figure: it ignores time spent
// waiting for a core on a busy machine).
// Events (or lines) per CPU second of each benchmark that ran, by name.
std::map<std::string, double> g_rates;

template <class Work>
Timing measure(benchmark::State& state, const std::string& name, Work work) {
  Timing total;
  int64_t items = 0;
  for (auto _ : state) {
    const double wall = wall_seconds(), cpu = cpu_seconds();
    items += work();
    total.wall += wall_seconds() - wall;
    total.cpu += cpu_seconds() - cpu;
  }
  state.counters["items"] = double(items);
  state.counters["per_s_wall"] = double(items) / total.wall;
  state.counters["per_s_cpu"] = double(items) / total.cpu;
  g_rates[name] = double(items) / total.cpu;
  return total;
}

// Lines of the history file, read in large chunks, each followed by enough
// readable bytes for simdjson.
class Lines {
 public:
  explicit Lines(const std::filesystem::path& path)
      : in_(path, std::ios::binary), buffer_(kChunk + 4096) {}
  bool next(std::string_view& line) {
    for (;;) {
      if (const void* nl = std::memchr(buffer_.data() + begin_, '\n', end_ - begin_)) {
        const size_t length = size_t(static_cast<const char*>(nl) - (buffer_.data() + begin_));
        line = std::string_view(buffer_.data() + begin_, length);
        begin_ += length + 1;
        return true;
      }
      if (!in_) return false;
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      in_.read(buffer_.data() + end_, std::streamsize(kChunk - end_));
      end_ += size_t(in_.gcount());
    }
  }

 private:
  static constexpr size_t kChunk = 1 << 20;
  std::ifstream in_;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
};

// --- Benchmarks ----------------------------------------------------------------------

void check_file(benchmark::State& state) {
  measure(state, "check_file", [] {
    g_results = locklab::checkers::check_file(g_history);
    return g_results.counts.at("events");
  });
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

void view_reader(benchmark::State& state) {
  measure(state, "view_reader", [] {
    locklab::history::ViewReader reader(g_history);
    int64_t n = 0;
    while (reader.next()) ++n;
    return n;
  });
}

void event_reader(benchmark::State& state) {
  measure(state, "event_reader", [] {
    locklab::history::EventReader reader(g_history);
    locklab::history::Event e;
    int64_t n = 0;
    while (n < kParseLines && reader.next(e)) ++n;
    return n;
  });
}

void parse_nlohmann_dom(benchmark::State& state) {
  measure(state, "parse: nlohmann DOM", [] {
    Lines lines(g_history);
    std::string_view line;
    int64_t n = 0, sum = 0;
    while (n < kParseLines && lines.next(line)) {
      const auto doc = nlohmann::json::parse(line);
      sum += doc.at("index").get<int64_t>();
      ++n;
    }
    benchmark::DoNotOptimize(sum);
    return n;
  });
}

#ifdef LOCKLAB_HAVE_SIMDJSON
// On-Demand checks a value only when it is read: to refuse every malformed
// line, as the checker path must, it has to read them all.
bool read_all(simdjson::ondemand::value value, int64_t& sum) {
  using simdjson::ondemand::json_type;
  json_type type;
  if (value.type().get(type)) return false;
  switch (type) {
    case json_type::object:
      for (auto field : value.get_object()) {
        std::string_view key;
        if (field.unescaped_key().get(key) || !read_all(field.value(), sum)) return false;
        sum += int64_t(key.size());
      }
      return true;
    case json_type::array:
      for (auto element : value.get_array()) {
        simdjson::ondemand::value inner;
        if (std::move(element).get(inner) || !read_all(inner, sum)) return false;
      }
      return true;
    case json_type::number: {
      simdjson::ondemand::number number;
      if (value.get_number().get(number)) return false;
      sum += number.is_int64() ? number.get_int64() : 1;
      return true;
    }
    case json_type::string: {
      std::string_view text;
      if (value.get_string().get(text)) return false;
      sum += int64_t(text.size());
      return true;
    }
    case json_type::boolean: {
      bool flag;
      return !value.get_bool().get(flag);
    }
    case json_type::null: {
      bool null;
      return !value.is_null().get(null) && null;
    }
  }
  return false;
}

void parse_simdjson_on_demand(benchmark::State& state) {
  measure(state, "parse: simdjson On-Demand", [] {
    simdjson::ondemand::parser parser;
    Lines lines(g_history);
    std::string_view line;
    int64_t n = 0, sum = 0;
    while (n < kParseLines && lines.next(line)) {
      simdjson::ondemand::document doc;
      simdjson::ondemand::value root;
      if (parser.iterate(line.data(), line.size(), line.size() + simdjson::SIMDJSON_PADDING)
              .get(doc) ||
          doc.get_value().get(root) || !read_all(root, sum))
        throw std::runtime_error("unexpected parse error");
      ++n;
    }
    benchmark::DoNotOptimize(sum);
    return n;
  });
}

// The DOM parser checks the whole line before it returns.
void parse_simdjson_dom(benchmark::State& state) {
  measure(state, "parse: simdjson DOM", [] {
    simdjson::dom::parser parser;
    Lines lines(g_history);
    std::string_view line;
    int64_t n = 0, sum = 0;
    while (n < kParseLines && lines.next(line)) {
      simdjson::dom::object doc = parser.parse(line.data(), line.size(), false).get_object();
      for (auto [key, value] : doc) {
        if (value.is_object()) {
          const simdjson::dom::object inner_object = value.get_object().value_unsafe();
          for (auto [inner_key, inner] : inner_object) sum += inner.get_int64().value_unsafe();
        } else if (value.is_int64()) {
          sum += value.get_int64().value_unsafe();
        } else {
          sum += value.get_string().value_unsafe().size();
        }
        sum += key.size();
      }
      ++n;
    }
    benchmark::DoNotOptimize(sum);
    return n;
  });
}
#endif

}  // namespace

int main(int argc, char** argv) {
  // Our own flag first; the rest is Google Benchmark's.
  std::vector<char*> args;
  std::filesystem::path kept;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--events=", 9) == 0) {
      g_events = std::stoll(argv[i] + 9);
    } else if (std::strncmp(argv[i], "--history=", 10) == 0) {
      kept = argv[i] + 10;
    } else {
      args.push_back(argv[i]);
    }
  }
  int count = int(args.size());
  benchmark::Initialize(&count, args.data());

  locklab::TempDir dir("locklab-bench");
  g_history = kept.empty() ? dir.path() / "history.jsonl" : kept;
  std::cout << "Generating a history of " << g_events << " events in " << g_history << " ..."
            << std::endl;
  const double started = wall_seconds();
  generate(g_history, g_events);
  std::cout << "  " << std::filesystem::file_size(g_history) / 1'000'000 << " MB in "
            << wall_seconds() - started << " s" << std::endl;

  auto once = [](benchmark::internal::Benchmark* b) {
    b->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
  };
  once(benchmark::RegisterBenchmark("check_file (end to end)", check_file));
  once(benchmark::RegisterBenchmark("ViewReader (whole file)", view_reader));
  once(benchmark::RegisterBenchmark("EventReader (1M lines)", event_reader));
  once(benchmark::RegisterBenchmark("parse: nlohmann DOM (1M lines)", parse_nlohmann_dom));
#ifdef LOCKLAB_HAVE_SIMDJSON
  once(benchmark::RegisterBenchmark("parse: simdjson On-Demand, every value read (1M lines)",
                                    parse_simdjson_on_demand));
  once(benchmark::RegisterBenchmark("parse: simdjson DOM (1M lines)", parse_simdjson_dom));
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  if (g_results.counts.count("events")) {
    std::cout << "\ncheck_file verdict on the generated (correct) history: "
              << (g_results.violated() ? "violated (unexpected!)" : "safe") << ", "
              << g_results.counts.at("events") << " events, " << g_results.counts.at("holds")
              << " holds\n"
              << "Target: " << kTargetPerSecond << " events/s end to end on one core; see "
              << "per_s_cpu (and per_s_wall) of \"check_file (end to end)\" above.\n";
  }
  // Ratios against baselines measured in this run, on this machine: they
  // travel between machines better than the absolute rates do.
  auto rate = [](const std::string& prefix) {
    for (const auto& [name, per_s] : g_rates)
      if (name.rfind(prefix, 0) == 0) return per_s;
    return 0.0;
  };
  const double end_to_end = rate("check_file");
  std::cout << std::fixed << std::setprecision(2);
  for (const char* baseline : {"parse: simdjson DOM", "parse: nlohmann DOM"})
    if (end_to_end > 0 && rate(baseline) > 0)
      std::cout << "check_file end to end / " << baseline
                << " alone: " << end_to_end / rate(baseline) << "\n";
  return 0;
}
