// The recorder writes a run's history to disk as it happens and merges the
// per-process files by time at the end, into exactly what FORMAT.md asks.
#include "recorder.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "reader.h"
#include "temp_dir.h"

namespace locklab::history {
namespace {

std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Event op(Type type, const std::string& f, int64_t n) {
  Event e;
  e.type = type;
  e.f = f;
  e.lock = "lock \"quoted\" ü";
  e.owner = "owner-" + std::to_string(n);
  e.client_time_ns = n;
  e.value = {{"n", n}, {"text", "line\nbreak"}};
  return e;
}

TEST(Recorder, MergesEveryProcessByTimeIntoTheHistoryFormat) {
  TempDir dir;
  Recorder recorder(dir.path());
  constexpr int kProcesses = 4, kEach = 3000;
  std::vector<ProcessLog*> logs;
  for (int p = 0; p < kProcesses; ++p)
    logs.push_back(&recorder.log_for("c" + std::to_string(p + 1)));
  EXPECT_EQ(&recorder.log_for("c2"), logs[1]);
  std::vector<std::thread> writers;
  for (int p = 0; p < kProcesses; ++p)
    writers.emplace_back([log = logs[p]] {
      for (int i = 0; i < kEach; ++i)
        log->append(op(i % 2 ? Type::Ok : Type::Invoke, "acquire", i));
    });
  for (auto& w : writers) w.join();
  const auto file = dir.path() / "history.jsonl";
  ASSERT_EQ(recorder.write_history(file), kProcesses * kEach);

  std::vector<Event> events = read_history(file);  // checks index and time order
  ASSERT_EQ(events.size(), size_t(kProcesses * kEach));
  std::map<std::string, int64_t> next;  // per process, the n expected next
  for (const Event& e : events) {
    int64_t& n = next[e.process];
    EXPECT_EQ(e.value["n"], n) << e.process;
    EXPECT_EQ(e.client_time_ns, n);
    EXPECT_EQ(e.owner, "owner-" + std::to_string(n));
    EXPECT_EQ(e.lock, "lock \"quoted\" ü");
    EXPECT_EQ(e.type, n % 2 ? Type::Ok : Type::Invoke);
    ++n;
  }
  EXPECT_EQ(next.size(), size_t(kProcesses));
  // Byte for byte what the whole-history writer makes of the same events.
  const auto again = dir.path() / "again.jsonl";
  write_jsonl(events, again);
  EXPECT_EQ(slurp(file), slurp(again));
  // Nothing but the history is left in the directory.
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"again.jsonl", "history.jsonl"}));
}

// What keeps a long run's memory flat: events reach the disk while the run
// goes on, not only when it ends.
TEST(Recorder, SpillsEventsToDiskWhileTheRunGoesOn) {
  TempDir dir;
  Recorder recorder(dir.path());
  ProcessLog& log = recorder.log_for("c1");
  auto spooled = [&] {
    uintmax_t bytes = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
      bytes += entry.file_size();
    return bytes;
  };
  EXPECT_EQ(spooled(), 0u);
  int64_t appended = 0;
  // 1 MB of events: far more than a log may keep in memory.
  for (; appended < 10'000 && spooled() < 512 * 1024; ++appended)
    log.append(op(Type::Invoke, "acquire", appended));
  EXPECT_GE(spooled(), 512u * 1024) << "after " << appended << " events nothing reached the disk";
  EXPECT_EQ(recorder.write_history(dir.path() / "h.jsonl"), appended);
}

TEST(Recorder, ARecordLargerThanABlockComesBackWhole) {
  TempDir dir;
  Recorder recorder(dir.path());
  ProcessLog& log = recorder.log_for("c1");
  std::vector<Event> events;
  for (int64_t n = 0; n < 3; ++n) {
    events.push_back(op(Type::Info, "acquire", n));
    // The middle one is 300 KB: its record outgrows the room a log keeps.
    if (n == 1) events.back().error = std::string(300 * 1024, 'x');
    log.append(events.back());
  }
  const auto file = dir.path() / "h.jsonl";
  ASSERT_EQ(recorder.write_history(file), 3);
  const std::vector<Event> read = read_history(file);
  ASSERT_EQ(read.size(), events.size());
  for (size_t i = 0; i < read.size(); ++i) {
    events[i].index = read[i].index;
    events[i].time_ns = read[i].time_ns;
    events[i].process = read[i].process;
    EXPECT_EQ(to_json(read[i]).dump(), to_json(events[i]).dump()) << "event " << i;
  }
}

TEST(Recorder, ASpoolIsRemovedWhenTheRunEndsWithoutAHistory) {
  TempDir dir;
  {
    Recorder recorder(dir.path());
    recorder.log_for("c1").append(op(Type::Invoke, "acquire", 1));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Recorder, WithoutASpoolDirectoryRecordsNothing) {
  TempDir dir;
  Recorder recorder{std::filesystem::path()};
  ProcessLog& log = recorder.log_for("c1");
  log.append(op(Type::Invoke, "acquire", 1));
  EXPECT_EQ(log.size(), 1);
  const auto file = dir.path() / "h.jsonl";
  EXPECT_EQ(recorder.write_history(file), 0);
  EXPECT_EQ(slurp(file), "");
}

TEST(Recorder, AnUnwritableSpoolIsAnErrorNamingIt) {
  Recorder recorder("/nonexistent-locklab-dir");
  try {
    recorder.log_for("c1");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-locklab-dir/"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace locklab::history
