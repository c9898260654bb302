#include "event.h"

#include <algorithm>
#include <charconv>

namespace locklab::history {

const char* to_string(Type type) {
  switch (type) {
    case Type::Invoke:
      return "invoke";
    case Type::Ok:
      return "ok";
    case Type::Fail:
      return "fail";
    case Type::Info:
      return "info";
  }
  return "info";
}

std::optional<Type> parse_type(std::string_view text) {
  // Every line has a type: by length first, then one comparison.
  switch (text.size()) {
    case 2:
      if (text == "ok") return Type::Ok;
      break;
    case 4:
      if (text == "fail") return Type::Fail;
      if (text == "info") return Type::Info;
      break;
    case 6:
      if (text == "invoke") return Type::Invoke;
      break;
  }
  return std::nullopt;
}

nlohmann::ordered_json to_json(const Event& e) {
  nlohmann::ordered_json j;
  j["index"] = e.index;
  j["time_ns"] = e.time_ns;
  j["process"] = e.process;
  j["type"] = to_string(e.type);
  j["f"] = e.f;
  if (e.lock) j["lock"] = *e.lock;
  if (e.owner) j["owner"] = *e.owner;
  if (e.token) j["token"] = *e.token;
  if (!e.value.is_null()) j["value"] = e.value;
  if (e.client_time_ns) j["client_time_ns"] = *e.client_time_ns;
  if (e.node) j["node"] = *e.node;
  if (e.error) j["error"] = *e.error;
  if (e.extra.is_object())
    for (auto it = e.extra.begin(); it != e.extra.end(); ++it)
      if (!j.contains(it.key())) j[it.key()] = it.value();
  return j;
}

namespace {

void append_integer(std::string& out, int64_t value) {
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, end);
}

// A JSON string as nlohmann::json dumps it. Plain printable ASCII is copied;
// anything else (escapes, UTF-8, invalid bytes, which throw) is left to it.
void append_string(std::string& out, std::string_view text) {
  for (char c : text)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
      out += nlohmann::json(text).dump();
      return;
    }
  out += '"';
  out += text;
  out += '"';
}

// A value as nlohmann::json dumps it. The flat objects of integers, strings
// and booleans that every operation records are written here without a
// string of their own; anything else is left to dump().
void append_value(std::string& out, const nlohmann::json& value) {
  const bool flat = value.is_object() && std::all_of(value.begin(), value.end(), [](const auto& v) {
                      return v.is_number_integer() || v.is_string() || v.is_boolean();
                    });
  if (!flat) {
    out += value.dump();
    return;
  }
  out += '{';
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it != value.begin()) out += ',';
    append_string(out, it.key());
    out += ':';
    const nlohmann::json& v = it.value();
    if (v.is_string()) {
      append_string(out, v.get_ref<const std::string&>());
    } else if (v.is_boolean()) {
      out += v.get<bool>() ? "true" : "false";
    } else if (v.is_number_unsigned()) {
      char buffer[24];
      out.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, v.get<uint64_t>()).ptr);
    } else {
      append_integer(out, v.get<int64_t>());
    }
  }
  out += '}';
}

void append_field(std::string& out, std::string_view key) {
  out += ",\"";
  out += key;
  out += "\":";
}

}  // namespace

void append_json(std::string& out, const Event& e) {
  // Unknown fields may collide with known ones: to_json decides those.
  if (e.extra.is_object() && !e.extra.empty()) {
    out += to_json(e).dump();
    return;
  }
  out += "{\"index\":";
  append_integer(out, e.index);
  append_field(out, "time_ns");
  append_integer(out, e.time_ns);
  append_field(out, "process");
  append_string(out, e.process);
  append_field(out, "type");
  append_string(out, to_string(e.type));
  append_field(out, "f");
  append_string(out, e.f);
  if (e.lock) append_field(out, "lock"), append_string(out, *e.lock);
  if (e.owner) append_field(out, "owner"), append_string(out, *e.owner);
  if (e.token) append_field(out, "token"), append_integer(out, *e.token);
  // nlohmann::json keeps object keys sorted, as ordered_json receives them.
  if (!e.value.is_null()) append_field(out, "value"), append_value(out, e.value);
  if (e.client_time_ns) append_field(out, "client_time_ns"), append_integer(out, *e.client_time_ns);
  if (e.node) append_field(out, "node"), append_string(out, *e.node);
  if (e.error) append_field(out, "error"), append_string(out, *e.error);
  out += '}';
}

}  // namespace locklab::history
