// Properties over random histories (model.h): correct locking is never
// reported; one planted violation is reported exactly, with its events;
// fields no checker reads change nothing; reading from a file changes
// nothing; both readers agree on any damaged input.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <sstream>

#include "check_helpers.h"
#include "model.h"
#include "reader_helpers.h"

namespace locklab::testing {
namespace {

using Numbers = std::vector<uint32_t>;

// Choices for a history of up to about a thousand events (inside a property).
Numbers history_choices() {
  const auto count = *rc::gen::resize(100, rc::gen::inRange<size_t>(0, 4000));
  return *rc::gen::container<Numbers>(count, rc::gen::arbitrary<uint32_t>());
}

std::string to_text(const std::vector<history::Event>& events) {
  std::string text;
  for (const auto& e : events) text += history::to_json(e).dump() + "\n";
  return text;
}

RC_GTEST_PROP(CheckerProperties, CorrectLockingIsNeverReported, ()) {
  auto events = correct_history(history_choices());
  shuffle_ties(events, *rc::gen::arbitrary<Numbers>());
  const auto results = checkers::check_events(events);
  RC_TAG(events.size() < 100   ? "< 100 events"
         : events.size() < 500 ? "< 500 events"
                               : ">= 500 events");
  int64_t holds = 0;
  for (const auto& e : events) holds += e.f == "acquire" && e.type == history::Type::Ok;
  RC_TAG(holds < 10 ? "< 10 acquires" : holds < 50 ? "< 50 acquires" : ">= 50 acquires");
  if (results.violated()) RC_LOG() << results.to_json().dump(2) << "\n" << to_text(events);
  RC_ASSERT(!results.violated());
  RC_ASSERT(results.counts.at("events") == int64_t(events.size()));
}

// Each plant on its own, so that every one gets its share of cases.
TEST(CheckerProperties, APlantedViolationIsReportedExactly) {
  for (const Plant& plant : plants()) {
    const bool ok = rc::check(plant.name, [&plant] {
      auto events = correct_history(history_choices());
      auto indices = interleave(events, plant, *rc::gen::arbitrary<Numbers>());
      const auto moved = shuffle_ties(events, *rc::gen::arbitrary<Numbers>());
      for (auto& index : indices) index = moved[size_t(index)];
      const auto results = checkers::check_events(events);
      RC_LOG() << results.to_json().dump(2) << "\n" << to_text(events);

      for (const auto& kind : violation_kind_names())
        RC_ASSERT(results.counts.at(kind) == (kind == plant.kind ? 1 : 0));
      RC_ASSERT(results.violations.size() == 1u);
      const checkers::Violation& v = results.violations[0];
      std::vector<int64_t> expected;
      for (size_t position : plant.evidence) expected.push_back(indices[position]);
      RC_ASSERT(v.kind == plant.kind);
      RC_ASSERT(v.lock == "planted");
      RC_ASSERT(v.events == expected);
      RC_ASSERT(v.processes == plant.processes);
      for (size_t i = 0; i < v.events.size(); ++i)
        RC_ASSERT(v.times_ns[i] == events[size_t(v.events[i])].time_ns);
      RC_ASSERT(results.per_lock.at("planted").at(plant.kind) == 1);
    });
    EXPECT_TRUE(ok) << plant.name;
  }
}

// A planted stuck lock with a fault in force from before it to after it is
// availability lost under that fault: counted and listed, never a violation.
RC_GTEST_PROP(CheckerProperties, StuckUnderAFaultIsAvailabilityLostNotAViolation, ()) {
  auto events = correct_history(history_choices());
  Plant plant = plants()[0];
  for (const Plant& p : plants())
    if (p.name == "liveness") plant = p;
  history::Event start, end;
  start.process = end.process = "nemesis";
  start.type = end.type = history::Type::Info;
  start.f = end.f = "crash-node";
  start.value = {{"phase", "start"}, {"fault", 91}};
  end.value = {{"phase", "end"}, {"fault", 91}};
  plant.events.insert(plant.events.begin(), start);
  plant.gaps_ns.insert(plant.gaps_ns.begin(), 1);
  plant.events.push_back(end);
  plant.gaps_ns.push_back(1);
  interleave(events, plant, *rc::gen::arbitrary<Numbers>());
  const auto results = checkers::check_events(events);
  RC_LOG() << results.to_json().dump(2) << "\n" << to_text(events);
  RC_ASSERT(!results.violated());
  RC_ASSERT(results.counts.at("availability-lost") == 1);
  RC_ASSERT(results.unavailable.size() == 1u);
  RC_ASSERT(results.unavailable[0].lock == std::string("planted"));
  RC_ASSERT(results.unavailable[0].faults == std::vector<std::string>{"crash-node"});
}

RC_GTEST_PROP(CheckerProperties, FieldsNoCheckerReadsChangeNothing, ()) {
  auto events = correct_history(history_choices());
  if (*rc::gen::arbitrary<bool>()) {
    const Plant& plant = plants()[*rc::gen::inRange<size_t>(0, plants().size())];
    interleave(events, plant, *rc::gen::arbitrary<Numbers>());
  }
  const auto before = checkers::check_events(events).to_json();
  add_noise(events, *rc::gen::arbitrary<Numbers>());
  RC_ASSERT(checkers::check_events(events).to_json() == before);
}

RC_GTEST_PROP(CheckerProperties, CheckFileEqualsCheckEvents, ()) {
  auto events = correct_history(history_choices());
  const Plant& plant = plants()[*rc::gen::inRange<size_t>(0, plants().size())];
  interleave(events, plant, *rc::gen::arbitrary<Numbers>());
  add_noise(events, *rc::gen::arbitrary<Numbers>());
  TempDir dir("locklab-property");
  const auto file = dir.path() / "history.jsonl";
  history::write_jsonl(events, file);
  RC_ASSERT(checkers::check_file(file).to_json() == checkers::check_events(events).to_json());
  const auto read_back = history::read_history(file);
  RC_ASSERT(read_back.size() == events.size());
  for (size_t i = 0; i < events.size(); ++i)
    RC_ASSERT(history::to_json(read_back[i]) == history::to_json(events[i]));
}

// Damages a valid history at random and reads it with both readers: they must
// accept the same lines and fail with the same message.
RC_GTEST_PROP(ReaderProperties, BothReadersAgreeOnDamagedInput, ()) {
  auto events = correct_history(*rc::gen::arbitrary<Numbers>());
  add_noise(events, *rc::gen::arbitrary<Numbers>());
  std::string text = to_text(events);
  static const std::string kBytes = "{}[]\",:0123456789-+.eE tfnulrax\\/\n\r\t\x01\x7f\xc3\xa9\xff";
  const auto edits = *rc::gen::container<std::vector<std::pair<uint32_t, uint32_t>>>(
      rc::gen::pair(rc::gen::arbitrary<uint32_t>(), rc::gen::arbitrary<uint32_t>()));
  for (auto [where, what] : edits) {
    if (text.empty()) break;
    const size_t at = where % text.size();
    switch (what % 3) {
      case 0:
        text[at] = kBytes[what / 3 % kBytes.size()];
        break;
      case 1:
        text.insert(at, 1, kBytes[what / 3 % kBytes.size()]);
        break;
      case 2:
        text.erase(at, 1);
        break;
    }
  }
  const ReadOutcome views = read_views(text);
  const ReadOutcome full = read_events(text);
  RC_LOG() << text;
  RC_ASSERT(views.error == full.error);
  if (views.error.empty()) RC_ASSERT(views.views == full.views);
  RC_ASSERT(views.error.find('\n') == std::string::npos);
}

}  // namespace
}  // namespace locklab::testing
