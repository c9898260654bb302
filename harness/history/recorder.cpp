#include "recorder.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <queue>
#include <stdexcept>

#include "clock.h"
#include "spool.h"

namespace locklab::history {

namespace {

// A log writes its lines in blocks of about this size: few system calls, and
// memory bounded by one block per process.
constexpr size_t kBlockBytes = 64 * 1024;

std::runtime_error write_error(const std::filesystem::path& path) {
  return std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
}

}  // namespace

ProcessLog::ProcessLog(std::string process, int64_t origin_ns, std::filesystem::path spool)
    : process_(std::move(process)), origin_ns_(origin_ns), spool_(std::move(spool)) {
  if (spool_.empty()) return;
  file_.reset(std::fopen(spool_.c_str(), "wb"));
  if (!file_) throw write_error(spool_);
  // A block and the record that ends it, without growing on the way.
  pending_.reserve(kBlockBytes + 4096);
}

ProcessLog::~ProcessLog() = default;

void ProcessLog::append(Event event) {
  append_at(std::move(event), monotonic_ns());
}

void ProcessLog::append_at(Event event, int64_t at_ns) {
  event.time_ns = last_time_ns_ = std::max(last_time_ns_, at_ns - origin_ns_);
  ++count_;
  if (!file_) return;
  append_record(pending_, event);
  if (pending_.size() >= kBlockBytes) flush();
}

void ProcessLog::flush() {
  if (!file_ || pending_.empty()) return;
  if (std::fwrite(pending_.data(), 1, pending_.size(), file_.get()) != pending_.size())
    throw write_error(spool_);
  pending_.clear();
}

Recorder::Recorder(std::filesystem::path spool_dir)
    : origin_ns_(monotonic_ns()), spool_dir_(std::move(spool_dir)) {}

Recorder::~Recorder() {
  std::error_code ignored;
  for (auto& log : logs_) {
    log.file_.reset();
    if (!log.spool_.empty()) std::filesystem::remove(log.spool_, ignored);
  }
}

ProcessLog& Recorder::log_for(const std::string& process) {
  return find_or_add(process, false);
}

ProcessLog& Recorder::late_log_for(const std::string& process) {
  return find_or_add(process, true);
}

ProcessLog& Recorder::find_or_add(const std::string& process, bool late) {
  std::lock_guard lock(mu_);
  for (auto& log : logs_)
    if (log.process() == process && log.late_ == late) return log;
  std::filesystem::path spool;
  if (!spool_dir_.empty()) spool = spool_dir_ / (".spool-" + std::to_string(logs_.size()));
  ProcessLog& log = logs_.emplace_back(process, origin_ns_, std::move(spool));
  log.late_ = late;
  return log;
}

int64_t Recorder::write_history(const std::filesystem::path& path) {
  std::lock_guard lock(mu_);
  struct Spool {
    SpoolReader reader;
    size_t order;  // the log's position: ties go to the earlier log
  };
  std::deque<Spool> spools;
  for (auto& log : logs_) {
    if (!log.file_) continue;
    log.flush();
    if (std::fflush(log.file_.get()) != 0) throw write_error(log.spool_);
    log.file_.reset();
    spools.push_back({SpoolReader(log.spool_, log.process()), spools.size()});
  }

  auto later = [](const Spool* a, const Spool* b) {
    return a->reader.time_ns() != b->reader.time_ns() ? a->reader.time_ns() > b->reader.time_ns()
                                                      : a->order > b->order;
  };
  std::priority_queue<Spool*, std::vector<Spool*>, decltype(later)> heap(later);
  for (auto& spool : spools)
    if (spool.reader.next()) heap.push(&spool);

  auto tmp = path;
  tmp += ".partial";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  if (!out) throw write_error(tmp);
  int64_t index = 0;
  std::string line;
  while (!heap.empty()) {
    Spool* spool = heap.top();
    heap.pop();
    Event event = spool->reader.event();
    event.index = index++;
    line.clear();
    append_json(line, event);
    line += '\n';
    if (std::fwrite(line.data(), 1, line.size(), out.get()) != line.size()) throw write_error(tmp);
    if (spool->reader.next()) heap.push(spool);
  }
  if (std::fflush(out.get()) != 0) throw write_error(tmp);
  out.reset();
  std::filesystem::rename(tmp, path);
  std::error_code ignored;
  for (auto& log : logs_) std::filesystem::remove(log.spool_, ignored);
  return index;
}

void write_jsonl(const std::vector<Event>& events, const std::filesystem::path& path) {
  auto tmp = path;
  tmp += ".partial";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    for (const auto& e : events) out << to_json(e).dump() << '\n';
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace locklab::history
