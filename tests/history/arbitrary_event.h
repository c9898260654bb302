// Events of any shape, for the properties that hold for every history line:
// every field present or not, any strings (invalid UTF-8 among them), values
// flat like the lab's own and nested like a nemesis's, unknown fields.
#pragma once

#include <rapidcheck.h>

#include <optional>

#include "event.h"

namespace locklab::history::testing {

template <typename T>
std::optional<T> maybe() {
  if (*rc::gen::arbitrary<bool>()) return std::nullopt;
  return *rc::gen::arbitrary<T>();
}

inline Event arbitrary_event() {
  Event e;
  e.index = *rc::gen::arbitrary<int64_t>();
  e.time_ns = *rc::gen::arbitrary<int64_t>();
  e.process = *rc::gen::arbitrary<std::string>();
  e.type = *rc::gen::element(Type::Invoke, Type::Ok, Type::Fail, Type::Info);
  e.f = *rc::gen::arbitrary<std::string>();
  e.lock = maybe<std::string>();
  e.owner = maybe<std::string>();
  e.token = maybe<int64_t>();
  e.client_time_ns = maybe<int64_t>();
  e.node = maybe<std::string>();
  e.error = maybe<std::string>();
  if (*rc::gen::arbitrary<bool>())
    e.value = {{*rc::gen::arbitrary<std::string>(), *rc::gen::arbitrary<int64_t>()},
               {"ttl_ms", *rc::gen::arbitrary<int>()}};
  // The shapes the lab records itself (flat objects of integers, strings
  // and booleans) and one it leaves to nlohmann (a nested value).
  if (*rc::gen::arbitrary<bool>()) {
    e.value = nlohmann::json::object();
    e.value[*rc::gen::arbitrary<std::string>()] = *rc::gen::arbitrary<std::string>();
    e.value[*rc::gen::arbitrary<std::string>()] = *rc::gen::arbitrary<bool>();
    e.value[*rc::gen::arbitrary<std::string>()] = *rc::gen::arbitrary<uint64_t>();
    if (*rc::gen::arbitrary<bool>()) e.value["nested"] = {1, "two", nullptr, 2.5};
  }
  if (*rc::gen::arbitrary<bool>())
    e.extra = {{*rc::gen::arbitrary<std::string>(), *rc::gen::arbitrary<int>()}, {"index", "x"}};
  return e;
}

}  // namespace locklab::history::testing
