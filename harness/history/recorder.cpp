#include "recorder.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <queue>
#include <stdexcept>

#include "clock.h"

namespace locklab::history {

namespace {

// A log writes its lines in blocks of about this size: few system calls, and
// memory bounded by one block per process.
constexpr size_t kBlockBytes = 64 * 1024;

// A spooled line is the history line without its leading `{"index":N,`: the
// index is known only once every log is merged.
constexpr std::string_view kIndexPrefix = "{\"index\":0,";
constexpr std::string_view kTimePrefix = "\"time_ns\":";

std::runtime_error write_error(const std::filesystem::path& path) {
  return std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
}

// One spool being read back, a line at a time.
struct SpoolReader {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file{nullptr, &std::fclose};
  std::filesystem::path path;
  char* line = nullptr;  // getline's buffer
  size_t capacity = 0;
  ssize_t length = 0;
  int64_t time_ns = 0;
  size_t order = 0;  // the log's position: ties go to the earlier log

  SpoolReader() = default;
  SpoolReader(const SpoolReader&) = delete;
  SpoolReader& operator=(const SpoolReader&) = delete;
  ~SpoolReader() { std::free(line); }

  // Reads the next line; false at the end of the file.
  bool next() {
    length = ::getline(&line, &capacity, file.get());
    if (length < 0) {
      if (std::ferror(file.get())) throw std::runtime_error("cannot read " + path.string());
      return false;
    }
    std::string_view text(line, size_t(length));
    if (text.substr(0, kTimePrefix.size()) != kTimePrefix)
      throw std::runtime_error(path.string() + ": a spooled line lacks its time_ns");
    const char* begin = line + kTimePrefix.size();
    auto [end, ec] = std::from_chars(begin, line + length, time_ns);
    if (ec != std::errc()) throw std::runtime_error(path.string() + ": bad time_ns");
    return true;
  }
};

}  // namespace

ProcessLog::ProcessLog(std::string process, int64_t origin_ns, std::filesystem::path spool)
    : process_(std::move(process)), origin_ns_(origin_ns), spool_(std::move(spool)) {
  if (spool_.empty()) return;
  file_.reset(std::fopen(spool_.c_str(), "wb"));
  if (!file_) throw write_error(spool_);
  pending_.reserve(kBlockBytes + 1024);
}

ProcessLog::~ProcessLog() = default;

void ProcessLog::append(Event event) {
  event.time_ns = monotonic_ns() - origin_ns_;
  ++count_;
  if (!file_) return;
  event.process = process_;
  event.index = 0;
  const size_t start = pending_.size();
  append_json(pending_, event);
  if (pending_.compare(start, kIndexPrefix.size(), kIndexPrefix) != 0)
    throw std::logic_error("a history line does not start with its index: " +
                           pending_.substr(start));
  pending_.erase(start, kIndexPrefix.size());
  pending_ += '\n';
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
  std::lock_guard lock(mu_);
  for (auto& log : logs_)
    if (log.process() == process) return log;
  std::filesystem::path spool;
  if (!spool_dir_.empty())
    spool = spool_dir_ / (".spool-" + std::to_string(logs_.size()) + ".jsonl");
  return logs_.emplace_back(process, origin_ns_, std::move(spool));
}

int64_t Recorder::write_history(const std::filesystem::path& path) {
  std::lock_guard lock(mu_);
  std::deque<SpoolReader> readers;
  for (auto& log : logs_) {
    if (!log.file_) continue;
    log.flush();
    if (std::fflush(log.file_.get()) != 0) throw write_error(log.spool_);
    log.file_.reset();
    SpoolReader& reader = readers.emplace_back();
    reader.path = log.spool_;
    reader.order = readers.size() - 1;
    reader.file.reset(std::fopen(log.spool_.c_str(), "rb"));
    if (!reader.file) throw std::runtime_error("cannot read " + log.spool_.string());
  }

  auto later = [](const SpoolReader* a, const SpoolReader* b) {
    return a->time_ns != b->time_ns ? a->time_ns > b->time_ns : a->order > b->order;
  };
  std::priority_queue<SpoolReader*, std::vector<SpoolReader*>, decltype(later)> heap(later);
  for (auto& reader : readers)
    if (reader.next()) heap.push(&reader);

  auto tmp = path;
  tmp += ".partial";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  if (!out) throw write_error(tmp);
  int64_t index = 0;
  char prefix[40];
  while (!heap.empty()) {
    SpoolReader* reader = heap.top();
    heap.pop();
    auto [end, ec] = std::to_chars(prefix, prefix + sizeof prefix, index++);
    if (std::fputs("{\"index\":", out.get()) < 0 ||
        std::fwrite(prefix, 1, size_t(end - prefix), out.get()) != size_t(end - prefix) ||
        std::fputc(',', out.get()) < 0 ||
        std::fwrite(reader->line, 1, size_t(reader->length), out.get()) != size_t(reader->length))
      throw write_error(tmp);
    if (reader->next()) heap.push(reader);
  }
  if (std::fflush(out.get()) != 0) throw write_error(tmp);
  out.reset();
  std::filesystem::rename(tmp, path);
  std::error_code ignored;
  for (auto& reader : readers) std::filesystem::remove(reader.path, ignored);
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
