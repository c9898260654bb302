#include "event.h"

#include <charconv>
#include <cstring>
#include <utility>

namespace locklab::history {

const char* to_string(Type type) {
  return kTypes.name(type).data();  // a literal: terminated
}

std::optional<Type> parse_type(std::string_view text) {
  return kTypes.named(text);
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

// A history line written into a buffer on the stack: one bounds check per
// part and one append at the end, where a line of std::string appends cost
// a recorder a tenth of its client's time. It writes only what it can write
// byte for byte as nlohmann::json dumps it; anything else (a string to
// escape, a value that is not a flat object, a line too long) makes it give
// up, and the caller dumps the line with nlohmann instead.
class FastLine {
 public:
  bool ok() const { return ok_; }
  std::string_view text() const { return {buffer_, size_t(end_ - buffer_)}; }

  void raw(std::string_view text) {
    if (!room(text.size())) return;
    std::memcpy(end_, text.data(), text.size());
    end_ += text.size();
  }
  template <typename Integer>
  void integer(Integer value) {
    if (room(20)) end_ = std::to_chars(end_, buffer_ + sizeof buffer_, value).ptr;
  }
  // Plain printable ASCII only: nlohmann escapes or validates the rest.
  void string(std::string_view text) {
    unsigned special = 0;  // no early exit: the loop is vectorised
    for (unsigned char c : text) special |= (c < 0x20) | (c > 0x7e) | (c == '"') | (c == '\\');
    if (special) ok_ = false;
    if (!room(text.size() + 2)) return;
    *end_++ = '"';
    std::memcpy(end_, text.data(), text.size());
    end_ += text.size();
    *end_++ = '"';
  }
  // The flat objects of integers, strings and booleans every operation
  // records (nlohmann keeps their keys sorted, as it dumps them).
  void value(const nlohmann::json& value) {
    if (!value.is_object()) {
      ok_ = false;
      return;
    }
    raw("{");
    bool first = true;
    for (const auto& [key, v] : value.get_ref<const nlohmann::json::object_t&>()) {
      if (!std::exchange(first, false)) raw(",");
      string(key);
      raw(":");
      if (v.is_string())
        string(v.get_ref<const std::string&>());
      else if (v.is_boolean())
        raw(v.get<bool>() ? "true" : "false");
      else if (v.is_number_unsigned())
        integer(v.get<uint64_t>());
      else if (v.is_number_integer())
        integer(v.get<int64_t>());
      else
        ok_ = false;
    }
    raw("}");
  }

 private:
  bool room(size_t bytes) {
    if (ok_ && size_t(buffer_ + sizeof buffer_ - end_) >= bytes) return true;
    ok_ = false;
    return false;
  }

  char buffer_[1024];
  char* end_ = buffer_;
  bool ok_ = true;
};

// Every field after the index, and the closing brace.
void write_fields(FastLine& line, const Event& e) {
  line.raw("\"time_ns\":");
  line.integer(e.time_ns);
  line.raw(",\"process\":");
  line.string(e.process);
  line.raw(",\"type\":");
  line.string(to_string(e.type));
  line.raw(",\"f\":");
  line.string(e.f);
  if (e.lock) line.raw(",\"lock\":"), line.string(*e.lock);
  if (e.owner) line.raw(",\"owner\":"), line.string(*e.owner);
  if (e.token) line.raw(",\"token\":"), line.integer(*e.token);
  if (!e.value.is_null()) line.raw(",\"value\":"), line.value(e.value);
  if (e.client_time_ns) line.raw(",\"client_time_ns\":"), line.integer(*e.client_time_ns);
  if (e.node) line.raw(",\"node\":"), line.string(*e.node);
  if (e.error) line.raw(",\"error\":"), line.string(*e.error);
  line.raw("}");
}

// Unknown fields may collide with known ones: to_json decides those.
bool has_extra(const Event& e) {
  return e.extra.is_object() && !e.extra.empty();
}

}  // namespace

void append_json(std::string& out, const Event& e) {
  if (!has_extra(e)) {
    FastLine line;
    line.raw("{\"index\":");
    line.integer(e.index);
    line.raw(",");
    write_fields(line, e);
    if (line.ok()) {
      out += line.text();
      return;
    }
  }
  out += to_json(e).dump();
}

}  // namespace locklab::history
