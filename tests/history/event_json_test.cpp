// append_json() writes exactly what to_json().dump() does: its fast path
// must not change a byte of the history.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "arbitrary_event.h"
#include "event.h"

namespace locklab::history {
namespace {

// The line, or the error's text when nlohmann refuses (e.g. invalid UTF-8).
std::string fast(const Event& e) {
  try {
    std::string out = "prefix:";
    append_json(out, e);
    return out.substr(7);
  } catch (const std::exception& error) {
    return std::string("error: ") + error.what();
  }
}

std::string slow(const Event& e) {
  try {
    return to_json(e).dump();
  } catch (const std::exception& error) {
    return std::string("error: ") + error.what();
  }
}

TEST(EventJson, AppendJsonWritesWhatToJsonDumps) {
  Event e;
  e.index = 17;
  e.time_ns = 123456789;
  e.process = "c1";
  e.type = Type::Ok;
  e.f = "acquire";
  EXPECT_EQ(fast(e), slow(e));
  e.lock = "lock \"x\"\\ é\n\t\x01\x7f";
  e.owner = "0123456789abcdef";
  e.token = -5;
  e.value = {{"validity_ms", 2000}, {"reentry", 1}, {"a", {1, "two", nullptr, 3.5, true}}};
  e.client_time_ns = 1'700'000'000'000'000'000;
  e.node = "127.0.0.1:6379";
  e.error = "timeout";
  EXPECT_EQ(fast(e), slow(e));
  e.value = {{"read", 3}, {"write", 4}, {"result", "released"}, {"deleted", true}};
  EXPECT_EQ(fast(e), slow(e)) << "a flat value, written without nlohmann";
  e.error = std::string(2000, 'e');  // longer than a line's buffer
  EXPECT_EQ(fast(e), slow(e));
  e.extra = {{"zeta", 1}, {"index", "ignored"}, {"alpha", {{"b", 2}}}};
  EXPECT_EQ(fast(e), slow(e));
  e.extra = nlohmann::json::object();
  EXPECT_EQ(fast(e), slow(e));
  e.lock = std::string("\xff\xfe", 2);  // invalid UTF-8: refused alike
  EXPECT_EQ(fast(e), slow(e));
  EXPECT_EQ(fast(e).rfind("error: ", 0), 0u);
}

RC_GTEST_PROP(EventJson, AppendJsonWritesWhatToJsonDumpsForAnyEvent, ()) {
  const Event e = testing::arbitrary_event();
  RC_ASSERT(fast(e) == slow(e));
}

}  // namespace
}  // namespace locklab::history
