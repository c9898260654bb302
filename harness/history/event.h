// One line of a history (see FORMAT.md beside this file).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "word_table.h"

namespace locklab::history {

enum class Type { Invoke, Ok, Fail, Info };

// Every type's word, as a history's lines spell it.
inline constexpr auto kTypes = word_table<Type>({
    {Type::Invoke, "invoke", "an operation starts"},
    {Type::Ok, "ok", "the operation took effect"},
    {Type::Fail, "fail", "the operation definitely did not take effect"},
    {Type::Info, "info", "the outcome is unknown, or the event is the nemesis's"},
});

const char* to_string(Type type);
// Parses "invoke"/"ok"/"fail"/"info"; nullopt otherwise.
std::optional<Type> parse_type(std::string_view text);

struct Event {
  int64_t index = -1;   // assigned when the history is merged
  int64_t time_ns = 0;  // harness monotonic time since run start
  std::string process;  // "c1", "nemesis"
  Type type = Type::Info;
  std::string f;  // "acquire", "release", "extend", "write", "lost", or a fault kind
  std::optional<std::string> lock;
  std::optional<std::string> owner;
  std::optional<int64_t> token;
  std::optional<int64_t> client_time_ns;
  std::optional<std::string> node;
  std::optional<std::string> error;
  nlohmann::json value;  // null = absent
  nlohmann::json extra;  // unknown fields of a parsed line, kept as they were; null = none
};

// The event as one JSON object, required fields first.
nlohmann::ordered_json to_json(const Event& event);

// Appends the event's history line (no newline) to `out`: exactly
// to_json(event).dump(), written straight into `out`, several times faster
// (a recorder writes one per client step).
void append_json(std::string& out, const Event& event);

}  // namespace locklab::history
