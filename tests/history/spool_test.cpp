// A recorder's spool gives back every event as it was: the history written
// from it is the one JSON lines written at once would have been.
#include "spool.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <fstream>

#include "arbitrary_event.h"
#include "temp_dir.h"

namespace locklab::history {
namespace {

// The event's line, or the error's text when nlohmann refuses it (invalid UTF-8).
std::string line_of(const Event& e) {
  try {
    return to_json(e).dump();
  } catch (const std::exception& error) {
    return std::string("error: ") + error.what();
  }
}

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string_view bytes_of(const RecordBuffer& records) {
  return {records.data(), records.size()};
}

RC_GTEST_PROP(Spool, EveryEventComesBackAsItWas, ()) {
  std::vector<Event> events;
  const int count = *rc::gen::inRange(1, 4);
  RecordBuffer bytes;
  for (int i = 0; i < count; ++i) {
    events.push_back(testing::arbitrary_event());
    events.back().process = "c1";
    append_record(bytes, events.back());
  }
  TempDir dir("locklab-spool-test");
  write_file(dir.path() / "spool", bytes_of(bytes));
  SpoolReader reader(dir.path() / "spool", "c1");
  for (const Event& written : events) {
    RC_ASSERT(reader.next());
    RC_ASSERT(reader.time_ns() == written.time_ns);
    Event read = reader.event();
    read.index = written.index;  // the merge numbers the lines
    RC_ASSERT(line_of(read) == line_of(written));
  }
  RC_ASSERT(!reader.next());
}

TEST(Spool, ARecordCutShortIsAnErrorNamingTheSpool) {
  Event e;
  e.f = "acquire";
  e.value = {{"ttl_ms", 100}};
  RecordBuffer bytes;
  append_record(bytes, e);
  TempDir dir("locklab-spool-test");
  const auto path = dir.path() / "spool";
  write_file(path, bytes_of(bytes).substr(0, bytes.size() - 3));
  SpoolReader reader(path, "c1");
  try {
    reader.next();
    FAIL() << "a cut record was read";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos) << error.what();
  }
}

TEST(Spool, AnEmptySpoolHasNoRecords) {
  TempDir dir("locklab-spool-test");
  write_file(dir.path() / "spool", "");
  SpoolReader reader(dir.path() / "spool", "c1");
  EXPECT_FALSE(reader.next());
}

}  // namespace
}  // namespace locklab::history
