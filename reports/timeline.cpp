#include "timeline.h"

#include <algorithm>
#include <tuple>

#include "fault_kind.h"
#include "reader.h"

namespace locklab::reports {

namespace {

using history::Event;
using history::Type;
using json = nlohmann::json;

std::string as_text(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// Faults that are moments by nature: without an end event they are not
// "still going", they just happened.
bool instant_kind(const std::string& kind) {
  const FaultKindInfo* row = fault_kind_info(kind);
  return row && row->instant;
}

struct LaneState {
  Lane lane;
  std::optional<int64_t> acquire_invoked_ns;
  // The ttl_ms and time of the process's operation in flight (acquire or extend).
  std::optional<int64_t> asked_ttl_ms;
  int64_t asked_ns = 0;
};

// What an acquire ok said about the lease it started.
struct LeaseFacts {
  std::string owner;
  std::optional<int64_t> ttl_ms;
  int64_t from_ns = 0;
};

class Builder {
 public:
  Builder(const std::set<int64_t>& keep, const std::set<int64_t>& locate)
      : keep_(keep), locate_(locate), holds_([this](const checkers::HoldSpan& span) {
          Hold hold;
          hold.lock = span.lock;
          hold.start_ns = span.start_ns;
          hold.end_ns = span.end_ns;
          hold.start_index = span.start_index;
          hold.end_index = span.end_index;
          hold.token = span.token;
          hold.end = span.end;
          if (auto facts = lease_.find(span.start_index); facts != lease_.end()) {
            hold.owner = std::move(facts->second.owner);
            hold.ttl_ms = facts->second.ttl_ms;
            hold.lease_from_ns = facts->second.from_ns;
            lease_.erase(facts);
          }
          if (auto open = open_hold_.find({span.process, span.lock});
              open != open_hold_.end() && open->second == span.start_index)
            open_hold_.erase(open);
          lane(span.process).lane.holds.push_back(std::move(hold));
        }) {}

  void add(const Event& event) {
    ++out_.event_count;
    out_.end_ns = std::max(out_.end_ns, event.time_ns);
    if (keep_.count(event.index)) out_.kept_events.emplace(event.index, history::to_json(event));
    if (locate_.count(event.index)) out_.places[event.index] = {event.time_ns, event.process};
    holds_.observe(history::view_of(event));
    if (event.process == "nemesis")
      nemesis(event);
    else
      client(lane(event.process), event);
  }

  Timeline finish() {
    holds_.finish();
    for (auto& [name, state] : lanes_)
      std::sort(state.lane.holds.begin(), state.lane.holds.end(),
                [](const Hold& a, const Hold& b) { return a.start_index < b.start_index; });
    for (auto& fault : out_.faults) {
      if (fault.instant || fault.ended) continue;
      if (instant_kind(fault.kind))
        fault.instant = true;
      else
        fault.end_ns = out_.end_ns;
    }
    for (auto& [name, state] : lanes_) out_.lanes.push_back(std::move(state.lane));
    std::sort(out_.lanes.begin(), out_.lanes.end(),
              [](const Lane& a, const Lane& b) { return process_name_less(a.process, b.process); });
    return std::move(out_);
  }

 private:
  LaneState& lane(const std::string& process) {
    auto [it, inserted] = lanes_.try_emplace(process);
    if (inserted) it->second.lane.process = process;
    return it->second;
  }

  static void mark(LaneState& state, MarkKind kind, const Event& e, std::string detail) {
    Mark m;
    m.kind = kind;
    m.time_ns = e.time_ns;
    m.index = e.index;
    m.f = e.f;
    m.token = e.token;
    m.detail = std::move(detail);
    state.lane.marks.push_back(std::move(m));
  }

  void client(LaneState& state, const Event& e) {
    std::string error = e.error.value_or("");
    if (e.type == Type::Invoke) {
      if (e.f == "acquire") state.acquire_invoked_ns = e.time_ns;
      if (e.f == "acquire" || e.f == "extend") {
        state.asked_ns = e.time_ns;
        state.asked_ttl_ms.reset();
        if (e.value.is_object() && e.value.contains("ttl_ms") &&
            e.value["ttl_ms"].is_number_integer())
          state.asked_ttl_ms = e.value["ttl_ms"].get<int64_t>();
      }
      return;
    }
    if (e.type == Type::Ok && (e.f == "acquire" || e.f == "extend")) lease(state, e);
    if (e.f == "acquire") {
      if (state.acquire_invoked_ns)
        state.lane.acquire_waits.push_back(
            {*state.acquire_invoked_ns, e.time_ns, e.type == Type::Ok});
      state.acquire_invoked_ns.reset();
      if (e.type != Type::Ok)
        mark(state, e.type == Type::Fail ? MarkKind::AcquireFailed : MarkKind::Unknown, e, error);
    } else if (e.f == "lost") {
      // Ends holds (the tracker's business); nothing to mark.
    } else if (e.f == "write") {
      std::string detail = error;
      if (e.value.is_object() && e.value.contains("read") && e.value.contains("write"))
        detail = "read " + as_text(e.value["read"]) + ", wrote " + as_text(e.value["write"]) +
                 (error.empty() ? "" : "; " + error);
      if (e.type == Type::Ok) mark(state, MarkKind::WriteAccepted, e, detail);
      if (e.type == Type::Fail) mark(state, MarkKind::WriteRejected, e, detail);
      if (e.type == Type::Info) mark(state, MarkKind::Unknown, e, detail);
    } else if (e.type == Type::Fail && (e.f == "release" || e.f == "extend")) {
      mark(state, MarkKind::Refused, e, error);
    } else if (e.type == Type::Info) {
      mark(state, MarkKind::Unknown, e, error);
    }
  }

  // Remembers what an acquire ok said about its lease until the hold it
  // starts ends (the tracker's callback takes it); an extend ok renews it.
  void lease(LaneState& state, const Event& e) {
    const std::pair<std::string, std::string> key{e.process, e.lock.value_or("")};
    auto open = open_hold_.find(key);
    if (e.f == "acquire" && open == open_hold_.end()) {
      open_hold_[key] = e.index;
      lease_[e.index] = {e.owner.value_or(""), state.asked_ttl_ms, state.asked_ns};
    } else if (e.f == "extend" && open != open_hold_.end() && state.asked_ttl_ms) {
      auto facts = lease_.find(open->second);
      if (facts != lease_.end()) {
        facts->second.ttl_ms = state.asked_ttl_ms;
        facts->second.from_ns = state.asked_ns;
      }
    }
  }

  void nemesis(const Event& e) {
    Fault fault;
    fault.kind = e.f;
    fault.start_ns = fault.end_ns = e.time_ns;
    fault.start_index = e.index;
    std::string phase;
    json parameters = json::object();
    if (e.value.is_object()) {
      for (const auto& [key, item] : e.value.items()) {
        if (key == "phase") {
          phase = as_text(item);
        } else if (key == "targets" && item.is_array()) {
          for (const auto& target : item) fault.targets.push_back(as_text(target));
        } else {
          if (!fault.parameters.empty()) fault.parameters += ' ';
          fault.parameters += key + "=" + as_text(item);
          parameters[key] = item;
        }
      }
    }
    if (e.f == locklab::name(FaultKind::CrashClient))
      for (const auto& target : fault.targets) {
        LaneState& state = lane(target);
        if (!state.lane.crashed_ns) state.lane.crashed_ns = e.time_ns;
      }
    if (phase == "end") {
      if (Fault* start = start_of(fault, parameters)) {
        start->end_ns = e.time_ns;
        start->end_index = e.index;
        start->ended = true;
        return;
      }
      fault.kind += " (end)";  // an end without a start is drawn as a moment
    }
    fault.instant = phase != "start";
    if (phase == "start") open_faults_.push_back({out_.faults.size(), parameters});
    out_.faults.push_back(std::move(fault));
  }

  // The open fault an end event closes, removed from the open ones: the
  // oldest of the same kind whose targets and parameters the end does not
  // contradict (an end may leave targets out, or add parameters); failing
  // that, the oldest of the same kind.
  Fault* start_of(const Fault& end, const json& end_parameters) {
    auto repeats = [&](const OpenFault& open) {
      const Fault& start = out_.faults[open.position];
      if (!end.targets.empty() && end.targets != start.targets) return false;
      for (const auto& [key, value] : end_parameters.items())
        if (open.parameters.contains(key) && open.parameters[key] != value) return false;
      return true;
    };
    for (int pass = 0; pass < 2; ++pass)
      for (auto it = open_faults_.begin(); it != open_faults_.end(); ++it)
        if (out_.faults[it->position].kind == end.kind && (pass == 1 || repeats(*it))) {
          Fault* start = &out_.faults[it->position];
          open_faults_.erase(it);
          return start;
        }
    return nullptr;
  }

  struct OpenFault {
    size_t position;  // in out_.faults
    json parameters;  // of its start event, without phase and targets
  };

  const std::set<int64_t>& keep_;
  const std::set<int64_t>& locate_;
  std::map<std::string, LaneState> lanes_;
  checkers::HoldTracker holds_;  // reports each hold as it ends
  std::vector<OpenFault> open_faults_;
  // (process, lock) -> the acquire ok of its open hold, and that acquire's lease.
  std::map<std::pair<std::string, std::string>, int64_t> open_hold_;
  std::map<int64_t, LeaseFacts> lease_;
  Timeline out_;
};

}  // namespace

bool process_name_less(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    size_t digits = s.size();
    while (digits > 0 && s[digits - 1] >= '0' && s[digits - 1] <= '9') --digits;
    std::string number = s.substr(digits);
    number.erase(0, std::min(number.find_first_not_of('0'), number.size()));
    return std::make_tuple(s.substr(0, digits), number.size(), number, s);
  };
  return split(a) < split(b);
}

Timeline read_timeline(const std::filesystem::path& path, const std::set<int64_t>& keep,
                       const std::set<int64_t>& locate) {
  // The project's one history reader: reports accept exactly the files the
  // checkers accept, with the same messages.
  history::EventReader reader(path);
  Builder builder(keep, locate);
  Event event;
  while (reader.next(event)) builder.add(event);
  return builder.finish();
}

}  // namespace locklab::reports
