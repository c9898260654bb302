// Writes histories by hand in tests: each call appends one event and returns
// its index. Time moves 10 ns per event unless a test sets it with at().
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "event.h"

namespace locklab::testing {

class HistoryBuilder {
 public:
  using json = nlohmann::json;
  using Type = history::Type;

  // The next event is stamped `time_ns` (later ones move on from there).
  HistoryBuilder& at(int64_t time_ns) {
    next_time_ns_ = time_ns;
    return *this;
  }

  int64_t add(const std::string& process, Type type, const std::string& f,
              std::optional<std::string> lock, json value = nullptr,
              std::optional<int64_t> token = std::nullopt) {
    history::Event e;
    e.index = int64_t(events_.size());
    e.time_ns = next_time_ns_;
    next_time_ns_ += 10;
    e.process = process;
    e.type = type;
    e.f = f;
    e.lock = std::move(lock);
    e.value = std::move(value);
    e.token = token;
    events_.push_back(std::move(e));
    return events_.back().index;
  }

  int64_t invoke(const std::string& p, const std::string& f, const std::string& lock,
                 json value = nullptr, std::optional<int64_t> token = std::nullopt) {
    return add(p, Type::Invoke, f, lock, std::move(value), token);
  }
  int64_t ok(const std::string& p, const std::string& f, const std::string& lock,
             json value = nullptr, std::optional<int64_t> token = std::nullopt) {
    return add(p, Type::Ok, f, lock, std::move(value), token);
  }
  int64_t fail(const std::string& p, const std::string& f, const std::string& lock,
               json value = nullptr) {
    return add(p, Type::Fail, f, lock, std::move(value));
  }
  int64_t info(const std::string& p, const std::string& f, const std::string& lock,
               json value = nullptr) {
    return add(p, Type::Info, f, lock, std::move(value));
  }
  int64_t lost(const std::string& p, const std::string& lock) { return info(p, "lost", lock); }
  int64_t crash(std::vector<std::string> targets) {
    return add("nemesis", Type::Info, "crash-client", std::nullopt,
               json{{"phase", "start"}, {"targets", targets}});
  }

  // A nemesis fault starting (over at once when `moment`), or ending: fault
  // `index` of the run, as the lab records it.
  int64_t fault_start(const std::string& kind, int64_t index, bool moment = false) {
    json value{{"phase", "start"}, {"fault", index}};
    if (moment) value["moment"] = true;
    return add("nemesis", Type::Info, kind, std::nullopt, value);
  }
  int64_t fault_end(const std::string& kind, int64_t index) {
    return add("nemesis", Type::Info, kind, std::nullopt, json{{"phase", "end"}, {"fault", index}});
  }

  // An acquire invoke and its ok; returns the ok's index.
  int64_t acquire(const std::string& p, const std::string& lock,
                  std::optional<int64_t> token = std::nullopt, json value = nullptr) {
    invoke(p, "acquire", lock, json{{"ttl_ms", 1000}, {"wait_ms", 100}});
    return ok(p, "acquire", lock, std::move(value), token);
  }
  // A release invoke and its ok; returns the invoke's index (where the hold ends).
  int64_t release(const std::string& p, const std::string& lock, json value = nullptr) {
    const int64_t invoked = invoke(p, "release", lock);
    ok(p, "release", lock, std::move(value));
    return invoked;
  }
  // A write invoke and its completion reading `read`; returns the completion's index.
  int64_t write(const std::string& p, const std::string& lock, int64_t read,
                Type outcome = Type::Ok, std::optional<int64_t> token = std::nullopt) {
    const json value{{"read", read}, {"write", read + 1}};
    invoke(p, "write", lock, value, token);
    return add(p, outcome, "write", lock, value, token);
  }

  const std::vector<history::Event>& events() const { return events_; }
  // The event at `index`, to add what the helpers above leave out (client_time_ns).
  history::Event& event(int64_t index) { return events_[size_t(index)]; }

 private:
  std::vector<history::Event> events_;
  int64_t next_time_ns_ = 0;
};

}  // namespace locklab::testing
