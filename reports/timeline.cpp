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
  std::map<std::string, int> depth;         // nesting count per lock
  std::map<std::string, size_t> open_hold;  // lock -> position in lane.holds
  std::optional<int64_t> acquire_invoked_ns;
};

class Builder {
 public:
  Builder(const std::set<int64_t>& keep, const std::set<int64_t>& locate)
      : keep_(keep), locate_(locate) {}

  void add(const Event& event) {
    ++out_.event_count;
    out_.end_ns = std::max(out_.end_ns, event.time_ns);
    if (keep_.count(event.index)) out_.kept_events.emplace(event.index, history::to_json(event));
    if (locate_.count(event.index)) out_.places[event.index] = {event.time_ns, event.process};
    if (event.process == "nemesis")
      nemesis(event);
    else
      client(lane(event.process), event);
  }

  Timeline finish() {
    for (auto& [name, state] : lanes_)
      for (auto& [lock, position] : state.open_hold)
        state.lane.holds[position].end_ns = out_.end_ns;
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

  // The lock an event is about: its own `lock`, else the only lock the
  // process holds (histories of one-lock scenarios may leave it out).
  static std::string lock_of(const LaneState& state, const Event& e) {
    if (e.lock) return *e.lock;
    if (state.open_hold.size() == 1) return state.open_hold.begin()->first;
    return "";
  }

  static void close_hold(LaneState& state, const std::string& lock, const Event& e, HoldEnd how) {
    auto it = state.open_hold.find(lock);
    if (it == state.open_hold.end()) return;
    Hold& hold = state.lane.holds[it->second];
    hold.end_ns = e.time_ns;
    hold.end_index = e.index;
    hold.end = how;
    state.open_hold.erase(it);
    state.depth.erase(lock);
  }

  static void close_all_holds(LaneState& state, const Event& e, HoldEnd how) {
    while (!state.open_hold.empty()) close_hold(state, state.open_hold.begin()->first, e, how);
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
      if (e.f == "release") {
        std::string lock = lock_of(state, e);
        auto depth = state.depth.find(lock);
        if (depth != state.depth.end() && --depth->second == 0)
          close_hold(state, lock, e, HoldEnd::Release);
      }
      return;
    }
    if (e.f == "acquire") {
      if (state.acquire_invoked_ns)
        state.lane.acquire_waits.push_back({*state.acquire_invoked_ns, e.time_ns});
      state.acquire_invoked_ns.reset();
      if (e.type == Type::Ok) {
        std::string lock = e.lock.value_or("");
        if (state.depth[lock]++ == 0) {
          Hold hold;
          hold.lock = lock;
          hold.start_ns = hold.end_ns = e.time_ns;
          hold.start_index = e.index;
          hold.token = e.token;
          state.open_hold[lock] = state.lane.holds.size();
          state.lane.holds.push_back(std::move(hold));
        }
      } else {
        mark(state, e.type == Type::Fail ? MarkKind::AcquireFailed : MarkKind::Unknown, e, error);
      }
    } else if (e.f == "lost") {
      if (e.lock)
        close_hold(state, *e.lock, e, HoldEnd::Lost);
      else
        close_all_holds(state, e, HoldEnd::Lost);
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
    if (e.f == "crash-client")
      for (const auto& target : fault.targets) {
        LaneState& state = lane(target);
        close_all_holds(state, e, HoldEnd::Crash);
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
  std::vector<OpenFault> open_faults_;
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
