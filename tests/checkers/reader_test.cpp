// The history reader: what it accepts, and the one-line message for each
// way a line can break the format (both readers must agree).
#include <gtest/gtest.h>

#include <fstream>

#include "reader_helpers.h"
#include "recorder.h"
#include "temp_dir.h"

namespace locklab::testing {
namespace {

const std::string kLine0 =
    R"({"index":0,"time_ns":0,"process":"c1","type":"invoke","f":"acquire","lock":"L","value":{"ttl_ms":100}})";

// The error both readers give for `text` (and that they agree).
std::string error_for(const std::string& text) {
  const ReadOutcome views = read_views(text);
  const ReadOutcome events = read_events(text);
  EXPECT_EQ(views.error, events.error) << text;
  if (views.error.empty()) {
    EXPECT_EQ(views.views, events.views);
  }
  return views.error;
}

std::string with_second_line(const std::string& line) {
  return kLine0 + "\n" + line + "\n";
}

TEST(Reader, FieldErrorsNameFileLineAndField) {
  EXPECT_EQ(error_for(with_second_line(
                R"({"index":1,"time_ns":5,"process":"c1","type":"done","f":"acquire"})")),
            R"(h.jsonl:2: field "type" must be one of invoke/ok/fail/info, got "done")");
  EXPECT_EQ(error_for(with_second_line(R"({"index":1,"time_ns":5,"type":"ok","f":"acquire"})")),
            R"(h.jsonl:2: missing required field "process")");
  EXPECT_EQ(error_for(with_second_line(
                R"({"index":"1","time_ns":5,"process":"c1","type":"ok","f":"acquire"})")),
            R"(h.jsonl:2: field "index" must be an integer, got "1")");
  EXPECT_EQ(error_for(with_second_line(
                R"({"index":1.5,"time_ns":5,"process":"c1","type":"ok","f":"acquire"})")),
            R"(h.jsonl:2: field "index" must be an integer, got 1.5)");
  EXPECT_EQ(
      error_for(with_second_line(
          R"({"index":9223372036854775808,"time_ns":5,"process":"c1","type":"ok","f":"acquire"})")),
      R"(h.jsonl:2: field "index" must be an integer, got 9223372036854775808)");
  EXPECT_EQ(error_for(with_second_line(
                R"({"index":1,"time_ns":5,"process":"","type":"ok","f":"acquire"})")),
            R"(h.jsonl:2: field "process" must be a non-empty string, got "")");
  EXPECT_EQ(
      error_for(with_second_line(R"({"index":1,"time_ns":5,"process":"c1","type":"ok","f":7})")),
      R"(h.jsonl:2: field "f" must be a non-empty string, got 7)");
  EXPECT_EQ(error_for(with_second_line(
                R"({"index":1,"time_ns":5,"process":"c1","type":"ok","f":"acquire","lock":5})")),
            R"(h.jsonl:2: field "lock" must be a string, got 5)");
  EXPECT_EQ(error_for(with_second_line(
                R"({"index":1,"time_ns":5,"process":"c1","type":"ok","f":"acquire","token":"7"})")),
            R"(h.jsonl:2: field "token" must be an integer, got "7")");
  EXPECT_EQ(
      error_for(with_second_line(
          R"({"index":1,"time_ns":5,"process":"c1","type":"ok","f":"acquire","node":["n1"]})")),
      R"(h.jsonl:2: field "node" must be a string, got ["n1"])");
  EXPECT_EQ(error_for(with_second_line(
                R"({"index":1,"index":1,"time_ns":5,"process":"c1","type":"ok","f":"acquire"})")),
            R"(h.jsonl:2: duplicate field "index")");
}

TEST(Reader, SequenceErrors) {
  EXPECT_EQ(error_for(R"({"index":1,"time_ns":0,"process":"c1","type":"ok","f":"acquire"})"),
            R"(h.jsonl:1: field "index" must be 0 on the first event, got 1)");
  EXPECT_EQ(error_for(with_second_line(
                R"({"index":2,"time_ns":5,"process":"c1","type":"ok","f":"acquire"})")),
            R"(h.jsonl:2: field "index" must be 1 (one more than the previous event's), got 2)");
  const std::string later =
      R"({"index":0,"time_ns":10,"process":"c1","type":"invoke","f":"acquire"})";
  EXPECT_EQ(error_for(later + "\n" +
                      R"({"index":1,"time_ns":5,"process":"c1","type":"ok","f":"acquire"})"),
            R"(h.jsonl:2: field "time_ns" must not decrease: 5 after 10)");
}

TEST(Reader, ValueFieldsCheckersReadMustBeIntegers) {
  EXPECT_EQ(
      error_for(with_second_line(
          R"({"index":1,"time_ns":5,"process":"c1","type":"ok","f":"write","value":{"read":"x"}})")),
      R"(h.jsonl:2: field "value.read" of write must be an integer, got "x")");
  EXPECT_EQ(
      error_for(with_second_line(
          R"({"index":1,"time_ns":5,"process":"c1","type":"ok","f":"release","value":{"deleted":true}})")),
      R"(h.jsonl:2: field "value.deleted" of release must be an integer, got true)");
  // The same field in an operation that does not use it is free-form.
  EXPECT_EQ(
      error_for(with_second_line(
          R"({"index":1,"time_ns":5,"process":"c1","type":"ok","f":"read","value":{"read":"x"}})")),
      "");
  EXPECT_EQ(
      error_for(with_second_line(
          R"({"index":1,"time_ns":5,"process":"nemesis","type":"info","f":"crash-client","value":{"phase":"start"}})")),
      R"(h.jsonl:2: a crash-client event needs "value.targets": a list of the process names it kills)");
  EXPECT_EQ(
      error_for(with_second_line(
          R"({"index":1,"time_ns":5,"process":"nemesis","type":"info","f":"crash-client","value":{"targets":["c1",2]}})")),
      R"(h.jsonl:2: a crash-client event needs "value.targets": a list of the process names it kills)");
}

TEST(Reader, MalformedJsonGivesTheColumn) {
  const std::string error = error_for(with_second_line(R"({"index":1,"time_ns":5,)"));
  EXPECT_EQ(error.rfind("h.jsonl:2: malformed JSON at column 24: ", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  const std::string trailing = error_for(kLine0 + " x\n");
  EXPECT_EQ(trailing.rfind("h.jsonl:1: malformed JSON at column 104: ", 0), 0u) << trailing;
  EXPECT_EQ(error_for(with_second_line("[1,2]")),
            "h.jsonl:2: every line must be a JSON object, got array");
  EXPECT_EQ(error_for(kLine0 + "\n\n"),
            "h.jsonl:2: empty line: every line must be one JSON object");
  EXPECT_EQ(error_for(with_second_line("{\"index\":1,\"x\":\"\x01\"}"))
                .rfind("h.jsonl:2: malformed JSON at column ", 0),
            0u);
  EXPECT_EQ(error_for(with_second_line("{\"index\":1,\"x\":\"\xff\"}"))
                .rfind("h.jsonl:2: malformed JSON at column ", 0),
            0u);
  std::string deep = R"({"index":1,"time_ns":5,"process":"c1","type":"ok","f":"acquire","x":)";
  deep += std::string(600, '[') + std::string(600, ']') + "}";
  EXPECT_EQ(error_for(with_second_line(deep)), "h.jsonl:2: JSON nested deeper than 512 levels");
}

TEST(Reader, MissingFileIsAnError) {
  try {
    history::ViewReader reader(std::filesystem::path("/nonexistent/h.jsonl"));
    FAIL();
  } catch (const history::HistoryError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/h.jsonl: cannot open: No such file or directory");
  }
  EXPECT_THROW(history::read_history("/nonexistent/h.jsonl"), history::HistoryError);
}

TEST(Reader, KeepsEveryFieldOfFullEvents) {
  const std::string line =
      R"({"index":0,"time_ns":7,"process":"c1","type":"ok","f":"acquire","lock":"L","owner":"ab",)"
      R"("token":33,"value":{"validity_ms":90,"reentry":1},"client_time_ns":-5,"node":"n1",)"
      R"("error":null,"extra":{"nested":[1,"x"]},"zz":true})";
  std::istringstream in(line + "\r\n");  // CRLF is fine
  history::EventReader reader(in, "h.jsonl");
  history::Event e;
  ASSERT_TRUE(reader.next(e));
  history::Event after;
  EXPECT_FALSE(reader.next(after));
  EXPECT_EQ(e.owner, "ab");
  EXPECT_EQ(e.token, 33);
  EXPECT_EQ(e.client_time_ns, -5);
  EXPECT_EQ(e.node, "n1");
  EXPECT_FALSE(e.error.has_value());  // null = absent
  EXPECT_EQ(e.value["validity_ms"], 90);
  EXPECT_EQ(e.extra, (nlohmann::json{{"extra", {{"nested", {1, "x"}}}}, {"zz", true}}));
  auto round_trip = nlohmann::json::parse(line);
  round_trip.erase("error");
  EXPECT_EQ(nlohmann::json(history::to_json(e)), round_trip);
  // The view of the same line, both ways.
  EXPECT_EQ(read_views(line).views, read_events(line).views);
  EXPECT_EQ(read_views(line).views.at(0),
            "0 7 c1 ok acquire lock=L token=33 ttl=- reentry=1 read=- write=- deleted=- "
            "remaining=- targets=");
}

TEST(Reader, LongLinesAndManyChunks) {
  TempDir dir("locklab-reader-test");
  const auto file = dir.path() / "h.jsonl";
  std::vector<history::Event> events;
  for (int64_t i = 0; i < 40000; ++i) {
    history::Event e;
    e.index = i;
    e.time_ns = i * 3;
    e.process = "c" + std::to_string(i % 7);
    e.type = i % 2 ? history::Type::Ok : history::Type::Invoke;
    e.f = "write";
    e.lock = "L";
    e.value = {{"read", i}, {"write", i + 1}};
    if (i == 12345) e.extra = {{"blob", std::string(3 << 20, 'x')}};  // longer than a chunk
    events.push_back(std::move(e));
  }
  history::write_jsonl(events, file);
  history::ViewReader reader(file);
  int64_t count = 0;
  while (const history::EventView* v = reader.next()) {
    ASSERT_EQ(v->index, count);
    ASSERT_EQ(v->read, count);
    ++count;
  }
  EXPECT_EQ(count, 40000);
  auto read_back = history::read_history(file);
  ASSERT_EQ(read_back.size(), events.size());
  EXPECT_EQ(read_back[12345].extra, events[12345].extra);
  EXPECT_EQ(nlohmann::json(history::to_json(read_back.back())),
            nlohmann::json(history::to_json(events.back())));
}

TEST(Reader, LastLineWithoutNewline) {
  EXPECT_EQ(read_views(kLine0).views.size(), 1u);
  EXPECT_EQ(read_views(kLine0).error, "");
  EXPECT_EQ(read_views("").views.size(), 0u);
}

}  // namespace
}  // namespace locklab::testing
