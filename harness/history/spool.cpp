#include "spool.h"

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace locklab::history {
namespace {

using nlohmann::json;

// The optional fields a record holds, one bit each, in the order they follow.
enum Field : uint8_t {
  kLock = 1,
  kOwner = 2,
  kToken = 4,
  kClientTime = 8,
  kNode = 16,
  kError = 32,
  kValue = 64,
  kExtra = 128,
};

// How a value is kept: the flat objects every operation records entry by
// entry (CBOR through nlohmann would cost more than the JSON line saved),
// anything else as CBOR.
enum class ValueForm : uint8_t { FlatObject, Cbor };
enum class EntryForm : uint8_t { Integer, Unsigned, String, False, True };

// Writes a record's parts into room made for them beforehand: a record is
// written with one resize of its block, not an append per part.
class RecordWriter {
 public:
  explicit RecordWriter(char* at) : at_(at) {}
  char* at() const { return at_; }

  template <typename T>
  void put(T value) {
    std::memcpy(at_, &value, sizeof value);
    at_ += sizeof value;
  }
  void put_string(std::string_view text) {
    put<uint32_t>(uint32_t(text.size()));
    std::memcpy(at_, text.data(), text.size());
    at_ += text.size();
  }
  // A value whose room flat_object_size() gave.
  void put_flat_object(const json& value) {
    put(ValueForm::FlatObject);
    put<uint8_t>(uint8_t(value.size()));
    for (const auto& [key, v] : value.get_ref<const json::object_t&>()) {
      put_string(key);
      if (v.is_string()) {
        put(EntryForm::String);
        put_string(v.get_ref<const std::string&>());
      } else if (v.is_boolean()) {
        put(v.get<bool>() ? EntryForm::True : EntryForm::False);
      } else if (v.is_number_unsigned()) {
        put(EntryForm::Unsigned);
        put<uint64_t>(v.get<uint64_t>());
      } else {
        put(EntryForm::Integer);
        put<int64_t>(v.get<int64_t>());
      }
    }
  }

 private:
  char* at_;
};

constexpr size_t kStringHeader = sizeof(uint32_t);

// The room a flat object of integers, strings and booleans takes, or 0 when
// `value` is not one (it is then kept as CBOR).
size_t flat_object_size(const json& value) {
  if (!value.is_object() || value.size() > 255) return 0;
  size_t size = 2;  // its form and its count of entries
  for (const auto& [key, v] : value.get_ref<const json::object_t&>()) {
    size += kStringHeader + key.size() + 1;
    if (v.is_string())
      size += kStringHeader + v.get_ref<const std::string&>().size();
    else if (v.is_number_integer())
      size += sizeof(int64_t);
    else if (!v.is_boolean())
      return 0;
  }
  return size;
}

// Reads one record's fields in the order they were put.
class Cursor {
 public:
  Cursor(const std::string& record, const std::filesystem::path& path)
      : at_(record.data()), end_(record.data() + record.size()), path_(path) {}

  template <typename T>
  T get() {
    need(sizeof(T));
    T value;
    std::memcpy(&value, at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::string string() {
    const uint32_t size = get<uint32_t>();
    need(size);
    std::string text(at_, size);
    at_ += size;
    return text;
  }
  json cbor() {
    const std::string bytes = string();
    return json::from_cbor(bytes);
  }
  json value() {
    if (get<ValueForm>() == ValueForm::Cbor) return cbor();
    json object = json::object();
    for (uint8_t entries = get<uint8_t>(); entries > 0; --entries) {
      const std::string key = string();
      switch (get<EntryForm>()) {
        case EntryForm::Integer:
          object[key] = get<int64_t>();
          continue;
        case EntryForm::Unsigned:
          object[key] = get<uint64_t>();
          continue;
        case EntryForm::String:
          object[key] = string();
          continue;
        case EntryForm::False:
          object[key] = false;
          continue;
        case EntryForm::True:
          object[key] = true;
          continue;
      }
      throw std::runtime_error(path_.string() + ": a spooled value is of no known form");
    }
    return object;
  }

 private:
  void need(size_t bytes) {
    if (size_t(end_ - at_) < bytes)
      throw std::runtime_error(path_.string() + ": a spooled record is cut short");
  }

  const char* at_;
  const char* end_;
  const std::filesystem::path& path_;
};

}  // namespace

void append_record(std::string& out, const Event& e) {
  auto string_room = [](const std::optional<std::string>& text) {
    return text ? kStringHeader + text->size() : 0;
  };
  const bool extra = e.extra.is_object() && !e.extra.empty();  // to_json reads no other
  const size_t flat_value = e.value.is_null() ? 0 : flat_object_size(e.value);
  std::vector<std::uint8_t> value_cbor, extra_cbor;
  if (!e.value.is_null() && flat_value == 0) value_cbor = json::to_cbor(e.value);
  if (extra) extra_cbor = json::to_cbor(e.extra);
  const size_t room = sizeof(uint32_t) + sizeof(int64_t) + 2 + kStringHeader + e.f.size() +
                      string_room(e.lock) + string_room(e.owner) + 2 * sizeof(int64_t) +
                      string_room(e.node) + string_room(e.error) + flat_value + 1 + kStringHeader +
                      value_cbor.size() + kStringHeader + extra_cbor.size();
  const size_t start = out.size();
  out.resize(start + room);
  RecordWriter record(out.data() + start + sizeof(uint32_t));  // its length goes first, once known
  record.put<int64_t>(e.time_ns);
  record.put<uint8_t>(uint8_t(e.type));
  record.put<uint8_t>(uint8_t((e.lock ? kLock : 0) | (e.owner ? kOwner : 0) |
                              (e.token ? kToken : 0) | (e.client_time_ns ? kClientTime : 0) |
                              (e.node ? kNode : 0) | (e.error ? kError : 0) |
                              (e.value.is_null() ? 0 : kValue) | (extra ? kExtra : 0)));
  record.put_string(e.f);
  if (e.lock) record.put_string(*e.lock);
  if (e.owner) record.put_string(*e.owner);
  if (e.token) record.put<int64_t>(*e.token);
  if (e.client_time_ns) record.put<int64_t>(*e.client_time_ns);
  if (e.node) record.put_string(*e.node);
  if (e.error) record.put_string(*e.error);
  auto bytes = [](const std::vector<std::uint8_t>& v) {
    return std::string_view(reinterpret_cast<const char*>(v.data()), v.size());
  };
  if (flat_value > 0) {
    record.put_flat_object(e.value);
  } else if (!e.value.is_null()) {
    record.put(ValueForm::Cbor);
    record.put_string(bytes(value_cbor));
  }
  if (extra) record.put_string(bytes(extra_cbor));
  const auto length = uint32_t(record.at() - (out.data() + start) - sizeof(uint32_t));
  std::memcpy(out.data() + start, &length, sizeof length);
  out.resize(size_t(record.at() - out.data()));
}

SpoolReader::SpoolReader(std::filesystem::path path, std::string process)
    : path_(std::move(path)), process_(std::move(process)) {
  file_.reset(std::fopen(path_.c_str(), "rb"));
  if (!file_) throw std::runtime_error("cannot read " + path_.string());
}

bool SpoolReader::next() {
  uint32_t length = 0;
  const size_t got = std::fread(&length, 1, sizeof length, file_.get());
  if (got == 0 && std::feof(file_.get())) return false;
  if (got == sizeof length) {
    record_.resize(length);
    if (length >= sizeof time_ns_ && std::fread(record_.data(), 1, length, file_.get()) == length) {
      std::memcpy(&time_ns_, record_.data(), sizeof time_ns_);
      return true;
    }
  }
  if (std::ferror(file_.get())) throw std::runtime_error("cannot read " + path_.string());
  throw std::runtime_error(path_.string() + ": a spooled record is cut short");
}

Event SpoolReader::event() const {
  Cursor in(record_, path_);
  Event e;
  e.process = process_;
  e.time_ns = in.get<int64_t>();
  e.type = Type(in.get<uint8_t>());
  const auto fields = in.get<uint8_t>();
  e.f = in.string();
  if (fields & kLock) e.lock = in.string();
  if (fields & kOwner) e.owner = in.string();
  if (fields & kToken) e.token = in.get<int64_t>();
  if (fields & kClientTime) e.client_time_ns = in.get<int64_t>();
  if (fields & kNode) e.node = in.string();
  if (fields & kError) e.error = in.string();
  if (fields & kValue) e.value = in.value();
  if (fields & kExtra) e.extra = in.cbor();
  return e;
}

}  // namespace locklab::history
