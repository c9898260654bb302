#include "event.h"

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

}  // namespace locklab::history
