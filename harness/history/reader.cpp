#include "reader.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <span>

#include "fault_kind.h"

#ifdef LOCKLAB_HAVE_SIMDJSON
#include <simdjson.h>
#endif

namespace locklab::history {
namespace {

using nlohmann::json;

// simdjson may read this many bytes past the end of a line.
#ifdef LOCKLAB_HAVE_SIMDJSON
constexpr size_t kPadding = simdjson::SIMDJSON_PADDING;
#else
constexpr size_t kPadding = 64;
#endif

// Deeper JSON is refused: it is never a history, and parsing it costs stack.
constexpr int kMaxDepth = 512;

// `text` == the literal `name`. The length is a constant, so the comparison
// compiles to a few integer compares instead of a call (this is per field of
// every line).
template <size_t N>
bool equals(std::string_view text, const char (&name)[N]) {
  return text.size() == N - 1 && std::memcmp(text.data(), name, N - 1) == 0;
}

// What is wrong with one line, before the reader adds "<file>:<line>: ".
struct LineError {
  std::string message;
};

// --- Lines ------------------------------------------------------------------

// Splits a stream into lines, reading it in large chunks. Every line it
// returns has kPadding readable bytes after its end, as simdjson requires.
class LineSource {
 public:
  explicit LineSource(std::istream& in) : in_(in) { grow(kFirstChunk); }

  // The next line without its '\n', or nullopt at the end of the input. The
  // view is valid until the next call.
  std::optional<std::string_view> next() {
    for (;;) {
      const char* start = buffer_.get() + begin_;
      if (const void* newline = std::memchr(start, '\n', end_ - begin_)) {
        const size_t length = static_cast<const char*>(newline) - start;
        begin_ += length + 1;
        return std::string_view(start, length);
      }
      if (eof_) {
        if (begin_ == end_) return std::nullopt;
        std::string_view last(start, end_ - begin_);
        begin_ = end_;
        return last;
      }
      refill();
    }
  }

 private:
  static constexpr size_t kFirstChunk = 64 << 10;
  static constexpr size_t kMaxChunk = 1 << 20;

  // Keeps the unfinished line at the front and reads after it. The buffer
  // doubles up to kMaxChunk, and beyond while a line fills half of it.
  void refill() {
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (capacity_ - end_ < capacity_ / 2 || capacity_ < kMaxChunk) grow(capacity_ * 2);
    in_.read(buffer_.get() + end_, std::streamsize(capacity_ - end_));
    end_ += size_t(in_.gcount());
    if (in_.bad()) throw LineError{"read failed"};
    if (in_.eof() || in_.gcount() == 0) eof_ = true;
  }

  void grow(size_t capacity) {
    auto bigger = std::make_unique_for_overwrite<char[]>(capacity + kPadding);
    if (buffer_) std::memcpy(bigger.get(), buffer_.get(), end_);
    buffer_ = std::move(bigger);
    capacity_ = capacity;
  }

  std::istream& in_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;  // bytes of input it holds; kPadding more are allocated
  size_t begin_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
};

// --- Shared rules -------------------------------------------------------------

std::string shown(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

bool is_int64(const json& value) {
  if (value.is_number_integer() && !value.is_number_unsigned()) return true;
  return value.is_number_unsigned() &&
         value.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max());
}

// The integer fields of `value` that checkers read, by the `f` they belong to.
struct ValueField {
  std::string_view name;
  std::optional<int64_t> EventView::*member;
};
constexpr ValueField kAcquireFields[] = {{"ttl_ms", &EventView::ttl_ms},
                                         {"reentry", &EventView::reentry},
                                         {"validity_ms", &EventView::validity_ms},
                                         {"attempt_ns", &EventView::attempt_ns}};
constexpr ValueField kExtendFields[] = {{"ttl_ms", &EventView::ttl_ms}};
constexpr ValueField kRenewedFields[] = {{"ttl_ms", &EventView::ttl_ms},
                                         {"sent_ns", &EventView::sent_ns}};
constexpr ValueField kWriteFields[] = {{"read", &EventView::read}, {"write", &EventView::write}};
constexpr ValueField kReleaseFields[] = {{"deleted", &EventView::deleted},
                                         {"remaining", &EventView::remaining}};

std::span<const ValueField> value_fields(std::string_view f) {
  if (equals(f, "acquire")) return kAcquireFields;
  if (equals(f, "write")) return kWriteFields;
  if (equals(f, "release")) return kReleaseFields;
  if (equals(f, "extend")) return kExtendFields;
  if (equals(f, "renewed")) return kRenewedFields;
  return {};
}

// The boolean fields of `value` that checkers read (acquire only).
struct FlagField {
  std::string_view name;
  bool EventView::*member;
};
constexpr FlagField kAcquireFlags[] = {{"renews", &EventView::renews},
                                       {"renewals_recorded", &EventView::renewals_recorded}};

std::span<const FlagField> flag_fields(std::string_view f) {
  if (equals(f, "acquire")) return kAcquireFlags;
  return {};
}

void clear_value_fields(EventView& view) {
  view.ttl_ms = view.reentry = view.read = view.write = view.deleted = view.remaining =
      view.validity_ms = view.attempt_ns = view.sent_ns = std::nullopt;
  view.renews = view.renewals_recorded = false;
  view.targets.clear();
  view.phase = EventView::Phase::None;
  view.fault = std::nullopt;
  view.moment = false;
}

bool is_crash_client(std::string_view process, std::string_view f) {
  return equals(process, "nemesis") && f == locklab::name(FaultKind::CrashClient);
}

const char* kTargetsRule =
    "a crash-client event needs \"value.targets\": a list of the process names it kills";

// Index and time rules between consecutive events.
class Sequence {
 public:
  void check(int64_t index, int64_t time_ns) {
    if (index != next_index_) {
      throw LineError{
          next_index_ == 0
              ? "field \"index\" must be 0 on the first event, got " + std::to_string(index)
              : "field \"index\" must be " + std::to_string(next_index_) +
                    " (one more than the previous event's), got " + std::to_string(index)};
    }
    if (next_index_ > 0 && time_ns < last_time_ns_) {
      throw LineError{"field \"time_ns\" must not decrease: " + std::to_string(time_ns) +
                      " after " + std::to_string(last_time_ns_)};
    }
    ++next_index_;
    last_time_ns_ = time_ns;
  }

 private:
  int64_t next_index_ = 0;
  int64_t last_time_ns_ = 0;
};

// The view of a full event; throws LineError for value fields of the wrong type.
void fill_view(const Event& e, EventView& view) {
  view.index = e.index;
  view.time_ns = e.time_ns;
  view.process = e.process;
  view.type = e.type;
  view.f = e.f;
  view.lock = e.lock ? std::optional<std::string_view>(*e.lock) : std::nullopt;
  view.token = e.token;
  view.client_time_ns = e.client_time_ns;
  clear_value_fields(view);
  for (const auto& field : value_fields(e.f)) {
    if (!e.value.is_object()) break;
    auto it = e.value.find(field.name);
    if (it == e.value.end() || it->is_null()) continue;
    if (!is_int64(*it)) {
      throw LineError{"field \"value." + std::string(field.name) + "\" of " + e.f +
                      " must be an integer, got " + shown(*it)};
    }
    view.*field.member = it->get<int64_t>();
  }
  for (const auto& field : flag_fields(e.f)) {
    if (!e.value.is_object()) break;
    auto it = e.value.find(field.name);
    if (it == e.value.end() || it->is_null()) continue;
    if (!it->is_boolean()) {
      throw LineError{"field \"value." + std::string(field.name) + "\" of " + e.f +
                      " must be true or false, got " + shown(*it)};
    }
    view.*field.member = it->get<bool>();
  }
  if (equals(e.process, "nemesis") && e.value.is_object()) {
    if (auto phase = e.value.find("phase"); phase != e.value.end() && phase->is_string())
      view.phase = *phase == "start" ? EventView::Phase::Start
                   : *phase == "end" ? EventView::Phase::End
                                     : EventView::Phase::None;
    if (auto fault = e.value.find("fault"); fault != e.value.end() && !fault->is_null()) {
      if (!is_int64(*fault))
        throw LineError{"field \"value.fault\" of a nemesis event must be an integer, got " +
                        shown(*fault)};
      view.fault = fault->get<int64_t>();
    }
    if (auto moment = e.value.find("moment"); moment != e.value.end() && !moment->is_null()) {
      if (!moment->is_boolean())
        throw LineError{"field \"value.moment\" of a nemesis event must be true or false, got " +
                        shown(*moment)};
      view.moment = moment->get<bool>();
    }
  }
  if (is_crash_client(e.process, e.f)) {
    if (!e.value.is_object()) throw LineError{kTargetsRule};
    auto targets = e.value.find("targets");
    if (targets == e.value.end() || !targets->is_array()) throw LineError{kTargetsRule};
    for (const auto& target : *targets) {
      if (!target.is_string()) throw LineError{kTargetsRule};
      view.targets.push_back(target.get_ref<const std::string&>());
    }
  }
}

// --- The full parser (nlohmann::json) -----------------------------------------

std::string parse_error_text(const json::exception& e) {
  // what() = "[json.exception.parse_error.101] parse error at line 1, column 6: <reason>".
  std::string text = e.what();
  auto column = text.find("column ");
  auto reason = text.find(": ", column == std::string::npos ? 0 : column);
  return reason == std::string::npos ? text : text.substr(reason + 2);
}

template <class T>
T required(const json& doc, const char* name, bool (*valid)(const json&), const char* rule) {
  auto it = doc.find(name);
  if (it == doc.end()) throw LineError{std::string("missing required field \"") + name + "\""};
  if (!valid(*it)) {
    throw LineError{std::string("field \"") + name + "\" must be " + rule + ", got " + shown(*it)};
  }
  return it->get<T>();
}

template <class T>
std::optional<T> optional_field(const json& doc, const char* name, bool (*valid)(const json&),
                                const char* rule) {
  auto it = doc.find(name);
  if (it == doc.end() || it->is_null()) return std::nullopt;
  if (!valid(*it)) {
    throw LineError{std::string("field \"") + name + "\" must be " + rule + ", got " + shown(*it)};
  }
  return it->get<T>();
}

bool is_string(const json& v) {
  return v.is_string();
}
bool is_name(const json& v) {
  return v.is_string() && !v.get_ref<const std::string&>().empty();
}
bool is_type(const json& v) {
  return v.is_string() && parse_type(v.get_ref<const std::string&>()).has_value();
}

const char* const kKnownFields[] = {"index", "time_ns", "process",        "type", "f",     "lock",
                                    "owner", "token",   "client_time_ns", "node", "error", "value"};

// Parses one line into a full event, checking every field it knows.
Event parse_event(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
    throw LineError{"empty line: every line must be one JSON object"};
  }
  std::vector<std::string> keys;
  auto check_structure = [&keys](int depth, json::parse_event_t event, json& parsed) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxDepth) {
      throw LineError{"JSON nested deeper than " + std::to_string(kMaxDepth) + " levels"};
    }
    if (event == json::parse_event_t::key && depth == 1) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
        throw LineError{"duplicate field " + json(key).dump()};  // quoted and escaped
      }
      keys.push_back(key);
    }
    return true;
  };
  json doc;
  try {
    doc = json::parse(line.begin(), line.end(), check_structure);
  } catch (const json::parse_error& e) {
    throw LineError{"malformed JSON at column " + std::to_string(e.byte) + ": " +
                    parse_error_text(e)};
  } catch (const json::exception& e) {
    throw LineError{"malformed JSON: " + parse_error_text(e)};
  }
  if (!doc.is_object()) {
    throw LineError{std::string("every line must be a JSON object, got ") + doc.type_name()};
  }

  Event e;
  e.index = required<int64_t>(doc, "index", is_int64, "an integer");
  e.time_ns = required<int64_t>(doc, "time_ns", is_int64, "an integer");
  e.process = required<std::string>(doc, "process", is_name, "a non-empty string");
  e.type = *parse_type(required<std::string>(doc, "type", is_type, "one of invoke/ok/fail/info"));
  e.f = required<std::string>(doc, "f", is_name, "a non-empty string");
  e.lock = optional_field<std::string>(doc, "lock", is_string, "a string");
  e.owner = optional_field<std::string>(doc, "owner", is_string, "a string");
  e.token = optional_field<int64_t>(doc, "token", is_int64, "an integer");
  e.client_time_ns = optional_field<int64_t>(doc, "client_time_ns", is_int64, "an integer");
  e.node = optional_field<std::string>(doc, "node", is_string, "a string");
  e.error = optional_field<std::string>(doc, "error", is_string, "a string");
  if (auto it = doc.find("value"); it != doc.end()) e.value = std::move(*it);

  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (std::find_if(std::begin(kKnownFields), std::end(kKnownFields), [&](const char* known) {
          return it.key() == known;
        }) == std::end(kKnownFields)) {
      if (e.extra.is_null()) e.extra = json::object();
      e.extra[it.key()] = std::move(it.value());
    }
  }
  return e;
}

// --- The fast parser (simdjson) ---------------------------------------------------

#ifdef LOCKLAB_HAVE_SIMDJSON
// Parses one line into `view` with simdjson's DOM parser (its kernels are
// chosen at run time for the CPU). Returns false for anything it does not
// accept cleanly; the full parser then decides. Never accepts a line the
// full parser refuses.
class FastParser {
 public:
  FastParser() {
    // Shallower than kMaxDepth, so that it never takes a line the full parser refuses.
    if (parser_.allocate(4096, kMaxDepth / 2)) throw std::bad_alloc();
  }

  bool parse(std::string_view line, EventView& view) {
    simdjson::dom::object doc;
    if (parser_.parse(line.data(), line.size(), false).get_object().get(doc)) return false;
    unsigned seen = 0;
    simdjson::dom::element value;
    bool has_value = false;
    unknown_keys_.clear();
    view.lock.reset();
    view.token.reset();
    view.client_time_ns.reset();
    for (auto [key, element] : doc) {
      const Field field = field_of(key);
      if (field == Field::Unknown) {
        if (std::find(unknown_keys_.begin(), unknown_keys_.end(), key) != unknown_keys_.end())
          return false;
        unknown_keys_.push_back(key);
        continue;
      }
      const unsigned bit = 1u << unsigned(field);
      if (seen & bit) return false;  // duplicate
      seen |= bit;
      switch (field) {
        case Field::Index:
          if (element.get_int64().get(view.index)) return false;
          break;
        case Field::Time:
          if (element.get_int64().get(view.time_ns)) return false;
          break;
        case Field::Process:
          if (element.get_string().get(view.process) || view.process.empty()) return false;
          break;
        case Field::Type: {
          std::string_view type;
          if (element.get_string().get(type)) return false;
          auto parsed = parse_type(type);
          if (!parsed) return false;
          view.type = *parsed;
          break;
        }
        case Field::F:
          if (element.get_string().get(view.f) || view.f.empty()) return false;
          break;
        case Field::Lock:
          if (!element.is_null()) {
            std::string_view lock;
            if (element.get_string().get(lock)) return false;
            view.lock = lock;
          }
          break;
        case Field::Token:
          if (!element.is_null()) {
            int64_t token;
            if (element.get_int64().get(token)) return false;
            view.token = token;
          }
          break;
        case Field::Owner:
        case Field::Node:
        case Field::Error:
          if (!element.is_null() && !element.is_string()) return false;
          break;
        case Field::ClientTime:
          if (!element.is_null()) {
            int64_t client_time;
            if (element.get_int64().get(client_time)) return false;
            view.client_time_ns = client_time;
          }
          break;
        case Field::Value:
          value = element;
          has_value = true;
          break;
        case Field::Unknown:
          break;
      }
    }
    constexpr unsigned kRequired = 1u << unsigned(Field::Index) | 1u << unsigned(Field::Time) |
                                   1u << unsigned(Field::Process) | 1u << unsigned(Field::Type) |
                                   1u << unsigned(Field::F);
    if ((seen & kRequired) != kRequired) return false;
    return parse_value(has_value ? &value : nullptr, view);
  }

 private:
  enum class Field {
    Index,
    Time,
    Process,
    Type,
    F,
    Lock,
    Owner,
    Token,
    ClientTime,
    Node,
    Error,
    Value,
    Unknown
  };

  // One candidate by length and first letter, then one comparison.
  static Field field_of(std::string_view key) {
    switch (key.size() * 256 + (key.empty() ? 0 : uint8_t(key[0]))) {
      case 1 * 256 + 'f':
        return Field::F;
      case 4 * 256 + 't':
        return equals(key, "type") ? Field::Type : Field::Unknown;
      case 4 * 256 + 'l':
        return equals(key, "lock") ? Field::Lock : Field::Unknown;
      case 4 * 256 + 'n':
        return equals(key, "node") ? Field::Node : Field::Unknown;
      case 5 * 256 + 'i':
        return equals(key, "index") ? Field::Index : Field::Unknown;
      case 5 * 256 + 'v':
        return equals(key, "value") ? Field::Value : Field::Unknown;
      case 5 * 256 + 't':
        return equals(key, "token") ? Field::Token : Field::Unknown;
      case 5 * 256 + 'o':
        return equals(key, "owner") ? Field::Owner : Field::Unknown;
      case 5 * 256 + 'e':
        return equals(key, "error") ? Field::Error : Field::Unknown;
      case 7 * 256 + 't':
        return equals(key, "time_ns") ? Field::Time : Field::Unknown;
      case 7 * 256 + 'p':
        return equals(key, "process") ? Field::Process : Field::Unknown;
      case 14 * 256 + 'c':
        return equals(key, "client_time_ns") ? Field::ClientTime : Field::Unknown;
      default:
        return Field::Unknown;
    }
  }

  // The value fields of fill_view(), with the same rules (the last of
  // duplicate keys counts, as with nlohmann).
  static bool parse_value(const simdjson::dom::element* value, EventView& view) {
    clear_value_fields(view);
    // Nemesis events are few: the full parser reads them.
    if (equals(view.process, "nemesis")) return false;
    simdjson::dom::object object;
    const bool is_object = value && !value->get_object().get(object);
    const auto fields = value_fields(view.f);
    if (is_object && !fields.empty()) {
      for (auto [key, member] : object) {
        for (const auto& field : fields) {
          if (key.size() != field.name.size() || key[0] != field.name[0] || key != field.name)
            continue;
          int64_t number;
          if (member.is_null()) {
            view.*field.member = std::nullopt;
          } else if (member.get_int64().get(number)) {
            return false;
          } else {
            view.*field.member = number;
          }
        }
      }
      for (auto [key, member] : object) {
        for (const auto& field : flag_fields(view.f)) {
          if (key != field.name) continue;
          bool flag = false;
          if (member.is_null()) {
            view.*field.member = false;
          } else if (member.get_bool().get(flag)) {
            return false;
          } else {
            view.*field.member = flag;
          }
        }
      }
    }
    if (is_crash_client(view.process, view.f)) {
      simdjson::dom::array targets;
      if (!is_object || object.at_key("targets").get_array().get(targets)) return false;
      for (auto target : targets) {
        std::string_view name;
        if (target.get_string().get(name)) return false;
        view.targets.push_back(name);
      }
    }
    return true;
  }

  simdjson::dom::parser parser_;
  std::vector<std::string_view> unknown_keys_;
};
#endif

// --- Files ---------------------------------------------------------------------

// The input of a reader: an owned file or a borrowed stream, plus its name.
struct Input {
  explicit Input(const std::filesystem::path& file) : name(file.string()) {
    owned.open(file, std::ios::binary);
    if (!owned) throw HistoryError(name + ": cannot open: " + std::strerror(errno));
    stream = &owned;
  }
  Input(std::istream& in, std::string name_) : name(std::move(name_)), stream(&in) {}
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  std::string name;
  std::ifstream owned;
  std::istream* stream;
};

HistoryError error_at(const std::string& name, int64_t line, const std::string& message) {
  return HistoryError(name + ":" + std::to_string(line) + ": " + message);
}

}  // namespace

// --- EventReader -----------------------------------------------------------------

struct EventReader::State {
  template <class... Args>
  explicit State(Args&&... args) : input(std::forward<Args>(args)...), lines(*input.stream) {}
  Input input;
  LineSource lines;
  Sequence sequence;
  EventView view;  // only to check the value fields
  int64_t line = 0;
};

EventReader::EventReader(const std::filesystem::path& file)
    : state_(std::make_unique<State>(file)) {}
EventReader::EventReader(std::istream& in, std::string name)
    : state_(std::make_unique<State>(in, std::move(name))) {}
EventReader::~EventReader() = default;

bool EventReader::next(Event& event) {
  State& s = *state_;
  try {
    auto line = s.lines.next();
    if (!line) return false;
    ++s.line;
    event = parse_event(*line);
    fill_view(event, s.view);
    s.sequence.check(event.index, event.time_ns);
    return true;
  } catch (const LineError& e) {
    throw error_at(s.input.name, s.line, e.message);
  }
}

// --- ViewReader -------------------------------------------------------------------

struct ViewReader::State {
  template <class... Args>
  explicit State(Args&&... args) : input(std::forward<Args>(args)...), lines(*input.stream) {}
  Input input;
  LineSource lines;
  Sequence sequence;
#ifdef LOCKLAB_HAVE_SIMDJSON
  FastParser fast;
#endif
  Event slow_event;  // the line the fast parser handed over, which `view` points into
  EventView view;
  int64_t line = 0;
};

ViewReader::ViewReader(const std::filesystem::path& file) : state_(std::make_unique<State>(file)) {}
ViewReader::ViewReader(std::istream& in, std::string name)
    : state_(std::make_unique<State>(in, std::move(name))) {}
ViewReader::~ViewReader() = default;

const EventView* ViewReader::next() {
  State& s = *state_;
  try {
    auto line = s.lines.next();
    if (!line) return nullptr;
    ++s.line;
#ifdef LOCKLAB_HAVE_SIMDJSON
    const bool fast = s.fast.parse(*line, s.view);
#else
    const bool fast = false;
#endif
    if (!fast) {
      s.slow_event = parse_event(*line);
      fill_view(s.slow_event, s.view);
    }
    s.sequence.check(s.view.index, s.view.time_ns);
    return &s.view;
  } catch (const LineError& e) {
    throw error_at(s.input.name, s.line, e.message);
  }
}

// --- Whole histories --------------------------------------------------------------

std::vector<Event> read_history(const std::filesystem::path& file) {
  EventReader reader(file);
  std::vector<Event> events;
  Event event;
  while (reader.next(event)) events.push_back(std::move(event));
  return events;
}

EventView view_of(const Event& event) {
  EventView view;
  try {
    fill_view(event, view);
  } catch (const LineError& error) {
    throw HistoryError("event " + std::to_string(event.index) + ": " + error.message);
  }
  return view;
}

void visit_events(const std::vector<Event>& events,
                  const std::function<void(const EventView&)>& visit) {
  Sequence sequence;
  EventView view;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    try {
      if (e.process.empty()) throw LineError{"field \"process\" must be a non-empty string"};
      if (e.f.empty()) throw LineError{"field \"f\" must be a non-empty string"};
      fill_view(e, view);
      sequence.check(e.index, e.time_ns);
    } catch (const LineError& error) {
      throw HistoryError("event " + std::to_string(i) + ": " + error.message);
    }
    visit(view);
  }
}

}  // namespace locklab::history
