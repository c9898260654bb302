#include "spool.h"

#include <algorithm>
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

constexpr size_t kStringHeader = sizeof(uint32_t);

size_t string_room(std::string_view text) {
  return kStringHeader + text.size();
}
size_t optional_room(const std::optional<std::string>& text) {
  return text ? string_room(*text) : 0;
}

// Writes a record's parts into room taken for them beforehand, a few parts
// at a time: a record costs a handful of checks for room, not one a part,
// and no room is cleared before it is written.
class PartWriter {
 public:
  explicit PartWriter(char* at) : at_(at) {}

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

 private:
  char* at_;
};

// Appends `value` entry by entry when it is a flat object of integers,
// strings and booleans (what every operation records); false, with nothing
// appended, when it is not.
bool append_flat_object(RecordBuffer& out, const json& value) {
  if (!value.is_object() || value.size() > 255) return false;
  const size_t mark = out.size();
  PartWriter head(out.extend(2));
  head.put(ValueForm::FlatObject);
  head.put<uint8_t>(uint8_t(value.size()));
  for (const auto& [key, v] : value.get_ref<const json::object_t&>()) {
    switch (v.type()) {
      case json::value_t::string: {
        const std::string& text = *v.get_ptr<const json::string_t*>();
        PartWriter entry(out.extend(string_room(key) + 1 + string_room(text)));
        entry.put_string(key);
        entry.put(EntryForm::String);
        entry.put_string(text);
        continue;
      }
      case json::value_t::boolean: {
        PartWriter entry(out.extend(string_room(key) + 1));
        entry.put_string(key);
        entry.put(*v.get_ptr<const json::boolean_t*>() ? EntryForm::True : EntryForm::False);
        continue;
      }
      case json::value_t::number_unsigned: {
        PartWriter entry(out.extend(string_room(key) + 1 + sizeof(uint64_t)));
        entry.put_string(key);
        entry.put(EntryForm::Unsigned);
        entry.put<uint64_t>(*v.get_ptr<const json::number_unsigned_t*>());
        continue;
      }
      case json::value_t::number_integer: {
        PartWriter entry(out.extend(string_room(key) + 1 + sizeof(int64_t)));
        entry.put_string(key);
        entry.put(EntryForm::Integer);
        entry.put<int64_t>(*v.get_ptr<const json::number_integer_t*>());
        continue;
      }
      default:
        out.shrink_to(mark);
        return false;
    }
  }
  return true;
}

// Appends `value` as CBOR, a string of bytes.
void append_cbor(RecordBuffer& out, const json& value) {
  const std::vector<std::uint8_t> bytes = json::to_cbor(value);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  PartWriter(out.extend(string_room(text))).put_string(text);
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

void append_record(RecordBuffer& out, const Event& e) {
  const bool extra = e.extra.is_object() && !e.extra.empty();  // to_json reads no other
  const size_t start = out.size();
  const size_t head = sizeof(uint32_t) + sizeof(int64_t) + 2 + string_room(e.f) +
                      optional_room(e.lock) + optional_room(e.owner) +
                      (e.token ? sizeof(int64_t) : 0) + (e.client_time_ns ? sizeof(int64_t) : 0) +
                      optional_room(e.node) + optional_room(e.error);
  PartWriter record(out.extend(head));
  record.put<uint32_t>(0);  // its length, once known
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
  if (!e.value.is_null() && !append_flat_object(out, e.value)) {
    PartWriter(out.extend(1)).put(ValueForm::Cbor);
    append_cbor(out, e.value);
  }
  if (extra) append_cbor(out, e.extra);
  const auto length = uint32_t(out.size() - start - sizeof(uint32_t));
  std::memcpy(out.data() + start, &length, sizeof length);
}

void RecordBuffer::grow(size_t bytes) {
  const size_t capacity = std::max(size_ + bytes, 2 * capacity_);
  auto data = std::make_unique_for_overwrite<char[]>(capacity);
  if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
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
