#include "model.h"

#include <algorithm>
#include <optional>

namespace locklab::testing {
namespace {

using history::Event;
using history::Type;
using json = nlohmann::json;

struct LockModel {
  std::string name;
  int64_t ttl_ms = 1000;
  bool reentrant = false;
  bool fencing = false;
  bool plain_delete = false;  // unlock by unconditional DEL (reports "deleted")
  // Redis:
  int owner = -1;
  int depth = 0;
  int64_t renewed_ns = 0;  // the owner's key expires ttl after this
  int64_t token = 0;       // the owner's token
  int64_t fence = 0;       // last token handed out
  // The protected store:
  int64_t counter = 0;
};

enum class Op { None, Acquire, Release, Extend, Write };

struct ProcessModel {
  std::string name;
  bool alive = true;
  Op op = Op::None;
  int lock = 0;
  bool took_effect = false;  // the operation in flight did what it does in Redis or the store
  Type outcome = Type::Ok;   // release and write: decided at invoke
  int64_t read = 0;          // the write in flight read this
  std::vector<int> held;  // per lock: the depth the history shows (acquire oks - release invokes)
};

class Model {
 public:
  explicit Model(const std::vector<uint32_t>& values) : choose_(values) {
    const int processes = 2 + int(choose_.below(4));
    const int locks = 1 + int(choose_.below(3));
    for (int i = 0; i < locks; ++i) {
      LockModel lock;
      lock.name = "L" + std::to_string(i);
      lock.ttl_ms = choose_.below(2) ? 1 : 3;
      const uint32_t kind = choose_.below(4);
      lock.reentrant = kind == 1;
      lock.fencing = kind == 2 || choose_.below(3) == 0;
      lock.plain_delete = kind == 3;
      locks_.push_back(lock);
    }
    for (int i = 0; i < processes; ++i) {
      ProcessModel p;
      p.name = "c" + std::to_string(i + 1);
      p.held.assign(size_t(locks), 0);
      processes_.push_back(p);
    }
  }

  std::vector<Event> run() {
    while (!choose_.done()) step();
    return std::move(events_);
  }

 private:
  int id(const ProcessModel& p) const { return int(&p - processes_.data()); }

  // A live client renews its key while it holds the lock by its history, or
  // while its operation on it is under way (after its acquire's SET worked).
  bool renews(const ProcessModel& p, int l) const {
    if (!p.alive) return false;
    if (p.held[size_t(l)] > 0) return true;
    if (p.op == Op::None || p.lock != l) return false;
    return p.op != Op::Acquire || p.took_effect;
  }

  // Redis's view now: renewed keys stay, the others expire.
  void expire() {
    for (size_t l = 0; l < locks_.size(); ++l) {
      LockModel& lock = locks_[l];
      if (lock.owner < 0) continue;
      if (renews(processes_[size_t(lock.owner)], int(l))) {
        lock.renewed_ns = time_ns_;
      } else if (time_ns_ >= lock.renewed_ns + lock.ttl_ms * 1'000'000) {
        lock.owner = -1;
      }
    }
  }

  void step() {
    expire();
    const uint32_t action = choose_.below(100);
    if (action < 4) return nemesis_noise();
    if (action == 4 && choose_.below(8) == 0)
      return crash(processes_[choose_.below(uint32_t(processes_.size()))]);
    ProcessModel& p = processes_[choose_.below(uint32_t(processes_.size()))];
    if (!p.alive) return;
    if (p.op == Op::None) return start(p);
    // An acquire keeps retrying for a while (its wait_ms).
    const bool retrying = p.op == Op::Acquire && !p.took_effect;
    if (choose_.below(4) < (retrying ? 3u : 2u)) return take_effect(p);
    complete(p, false);
  }

  Event& emit(const std::string& process, Type type, const std::string& f,
              std::optional<std::string> lock, json value = nullptr) {
    // Mostly short steps (0: simultaneous), now and then a stall of 2 ms,
    // longer than the 1 ms TTL: only keys nobody renews expire meanwhile.
    static constexpr int64_t kSteps[] = {0, 1, 1000, 50'000};
    time_ns_ += choose_.below(40) == 0 ? 2'000'000 : kSteps[choose_.below(4)];
    Event e;
    e.index = int64_t(events_.size());
    e.time_ns = time_ns_;
    e.process = process;
    e.type = type;
    e.f = f;
    e.lock = std::move(lock);
    e.value = std::move(value);
    events_.push_back(std::move(e));
    return events_.back();
  }

  // Faults that are over once done (a start marked "moment", or an end that
  // closes nothing, being of a fault no plant has): a fault in force would
  // excuse a planted liveness stretch.
  void nemesis_noise() {
    static const char* kFaults[] = {"partition", "delay", "pause", "clock-jump", "heal"};
    const bool start = choose_.below(2);
    json value{{"phase", start ? "start" : "end"}, {"targets", {"n1"}}, {"fault", 1000}};
    if (start) value["moment"] = true;
    emit("nemesis", Type::Info, kFaults[choose_.below(5)], std::nullopt, value);
  }

  void crash(ProcessModel& p) {
    if (!p.alive) return;
    emit("nemesis", Type::Info, "crash-client", std::nullopt,
         json{{"phase", "start"}, {"targets", {p.name}}});
    p.alive = false;
    // It dies at its next step: the operation in flight may still take
    // effect, and its completion may still be recorded.
    if (p.op == Op::None) return;
    if (choose_.below(2)) take_effect(p);
    complete(p, choose_.below(2) == 0);
  }

  void start(ProcessModel& p) {
    const int l = int(choose_.below(uint32_t(locks_.size())));
    LockModel& lock = locks_[size_t(l)];
    const bool holding = p.held[size_t(l)] > 0;  // then Redis has it as ours too
    const bool owner = lock.owner == id(p);      // perhaps without knowing
    p.lock = l;
    p.took_effect = false;
    const uint32_t pick = choose_.below(20);
    if (owner && (holding ? pick < 7 : pick < 5)) {
      p.op = Op::Release;
      if (holding) --p.held[size_t(l)];
      const uint32_t outcome = choose_.below(10);
      p.outcome = outcome == 0 ? Type::Fail : outcome <= 2 ? Type::Info : Type::Ok;
      // Fail: never sent. Info: the reply was lost, the DEL may have run.
      emit(p.name, Type::Invoke, "release", lock.name);
    } else if (holding && pick < 14) {
      p.op = Op::Write;
      p.read = lock.counter;
      const uint32_t outcome = choose_.below(10);
      p.outcome = outcome == 0 ? Type::Fail : outcome <= 2 ? Type::Info : Type::Ok;
      Event& e = emit(p.name, Type::Invoke, "write", lock.name,
                      json{{"read", p.read}, {"write", p.read + 1}});
      if (lock.fencing) e.token = lock.token;
    } else if (holding && pick < 16) {
      p.op = Op::Extend;
      emit(p.name, Type::Invoke, "extend", lock.name, json{{"ttl_ms", lock.ttl_ms}});
    } else if (holding && pick < 18) {
      p.held[size_t(l)] = 0;  // the client gives up; its key expires in time
      emit(p.name, Type::Info, "lost", lock.name);
    } else if (!holding || lock.reentrant) {
      p.op = Op::Acquire;
      emit(p.name, Type::Invoke, "acquire", lock.name,
           json{{"ttl_ms", lock.ttl_ms}, {"wait_ms", 100}});
    }
  }

  // What the operation in flight does in Redis or the store, between its
  // invoke and its completion. An acquire tries (again) to SET.
  void take_effect(ProcessModel& p) {
    LockModel& lock = locks_[size_t(p.lock)];
    switch (p.op) {
      case Op::Acquire:
        if (p.took_effect) return;
        if (lock.owner == -1) {
          lock.owner = id(p);
          lock.depth = 1;
          lock.token = ++lock.fence;
          lock.renewed_ns = time_ns_;
          p.took_effect = true;
        } else if (lock.owner == id(p) && lock.reentrant) {
          ++lock.depth;
          p.took_effect = true;
        }
        return;
      case Op::Release:
        if (p.took_effect || p.outcome == Type::Fail || lock.owner != id(p)) return;
        p.took_effect = true;
        if (p.outcome == Type::Info && choose_.below(2)) return;  // the DEL did not run
        if (--lock.depth == 0) lock.owner = -1;
        return;
      case Op::Write:
        if (p.took_effect || p.outcome == Type::Fail) return;
        p.took_effect = true;
        if (p.outcome == Type::Info && choose_.below(2)) return;  // the write got lost
        lock.counter = p.read + 1;
        return;
      case Op::Extend:
      case Op::None:
        return;
    }
  }

  // Completes p's operation in flight (taking its effect first if it has not
  // yet); `silent` leaves the completion out of the history.
  void complete(ProcessModel& p, bool silent) {
    LockModel& lock = locks_[size_t(p.lock)];
    const Op op = p.op;
    take_effect(p);  // an acquire's last try is at its completion
    Type recorded = p.outcome;
    json value = nullptr;
    std::optional<int64_t> token;
    if (op == Op::Acquire) {
      const uint32_t outcome = choose_.below(20);
      recorded = outcome == 0 ? Type::Info : p.took_effect ? Type::Ok : Type::Fail;
      if (recorded == Type::Ok) {
        if (p.alive) ++p.held[size_t(p.lock)];
        value = json{{"validity_ms", lock.ttl_ms}};
        if (lock.reentrant || choose_.below(2)) value["reentry"] = lock.reentrant ? lock.depth : 1;
        if (lock.fencing) token = lock.token;
      }
    } else if (op == Op::Release && recorded == Type::Ok) {
      value = json{{"result", "released"}};
      if (lock.reentrant) value["remaining"] = lock.owner == id(p) ? lock.depth : 0;
      if (lock.plain_delete) value["deleted"] = 1;
    } else if (op == Op::Write) {
      value = json{{"read", p.read}, {"write", p.read + 1}};
      if (lock.fencing) token = lock.token;
    } else if (op == Op::Extend) {
      const uint32_t outcome = choose_.below(10);
      recorded = outcome == 0 ? Type::Fail : outcome == 1 ? Type::Info : Type::Ok;
    }
    p.op = Op::None;
    if (silent) return;
    static const char* kNames[] = {"", "acquire", "release", "extend", "write"};
    Event& e = emit(p.name, recorded, kNames[int(op)], lock.name, std::move(value));
    e.token = token;
    if (recorded != Type::Ok) e.error = "model says " + std::string(history::to_string(recorded));
  }

  Choices choose_;
  std::vector<LockModel> locks_;
  std::vector<ProcessModel> processes_;
  std::vector<Event> events_;
  int64_t time_ns_ = 0;
};

// --- Plants --------------------------------------------------------------------

class PlantBuilder {
 public:
  PlantBuilder(std::string name, std::string kind) {
    plant_.name = std::move(name);
    plant_.kind = std::move(kind);
  }
  // Adds an event on lock "planted"; returns its position.
  size_t add(const std::string& process, Type type, const std::string& f, json value = nullptr,
             std::optional<int64_t> token = std::nullopt, int64_t gap_ns = 1) {
    Event e;
    e.process = process;
    e.type = type;
    e.f = f;
    if (process != "nemesis") e.lock = "planted";
    e.value = std::move(value);
    e.token = token;
    plant_.events.push_back(std::move(e));
    plant_.gaps_ns.push_back(gap_ns);
    return plant_.events.size() - 1;
  }
  size_t acquire(const std::string& p, json value = nullptr,
                 std::optional<int64_t> token = std::nullopt) {
    add(p, Type::Invoke, "acquire", json{{"ttl_ms", 1000}});
    return add(p, Type::Ok, "acquire", std::move(value), token);
  }
  size_t release(const std::string& p, Type outcome = Type::Ok, json value = nullptr) {
    const size_t invoked = add(p, Type::Invoke, "release");
    add(p, outcome, "release", std::move(value));
    return invoked;
  }
  size_t write(const std::string& p, int64_t read) {
    add(p, Type::Invoke, "write", json{{"read", read}, {"write", read + 1}});
    return add(p, Type::Ok, "write", json{{"read", read}, {"write", read + 1}});
  }
  Plant done(std::vector<size_t> evidence, std::vector<std::string> processes) {
    plant_.evidence = std::move(evidence);
    plant_.processes = std::move(processes);
    return std::move(plant_);
  }

 private:
  Plant plant_;
};

std::vector<Plant> make_plants() {
  std::vector<Plant> all;
  for (const char* ending : {"release", "lost", "crash", "none"}) {
    PlantBuilder b(std::string("mutual-exclusion/") + ending, "mutual-exclusion");
    const size_t first = b.acquire("x1");
    const size_t second = b.acquire("x2");
    std::vector<size_t> evidence = {first, second};
    if (ending == std::string("release")) evidence.push_back(b.release("x1"));
    if (ending == std::string("lost")) evidence.push_back(b.add("x1", Type::Info, "lost"));
    if (ending == std::string("crash")) {
      evidence.push_back(b.add("nemesis", Type::Info, "crash-client",
                               json{{"phase", "start"}, {"targets", {"x1"}}}));
    }
    b.release("x2");
    all.push_back(b.done(evidence, {"x1", "x2"}));
  }
  {
    PlantBuilder b("lost-update", "lost-update");
    b.acquire("x1");
    const size_t first = b.write("x1", 0);
    b.release("x1");
    b.acquire("x2");
    const size_t second = b.write("x2", 0);
    b.release("x2");
    all.push_back(b.done({first, second}, {"x1", "x2"}));
  }
  {
    PlantBuilder b("stale-write", "stale-write");
    const size_t x1_acquire = b.acquire("x1");
    b.add("x1", Type::Info, "lost");
    const size_t x2_acquire = b.acquire("x2");
    const size_t x2_write = b.write("x2", 0);
    b.release("x2");
    const size_t x1_write = b.write("x1", 1);
    b.release("x1", Type::Fail, json{{"result", "not-owner"}});
    all.push_back(b.done({x1_acquire, x2_acquire, x2_write, x1_write - 1, x1_write}, {"x1", "x2"}));
  }
  for (int64_t second_token : {7, 3}) {
    PlantBuilder b("token-order/" + std::to_string(second_token), "token-order");
    const size_t first = b.acquire("x1", nullptr, 7);
    b.release("x1");
    const size_t second = b.acquire("x2", nullptr, second_token);
    b.release("x2");
    all.push_back(b.done({first, second - 1, second}, {"x1", "x2"}));
  }
  {
    PlantBuilder b("ownership", "ownership");
    const size_t x1_acquire = b.acquire("x1");
    b.add("x1", Type::Info, "lost");
    const size_t x2_acquire = b.acquire("x2");
    const size_t release = b.release("x1", Type::Ok, json{{"result", "released"}, {"deleted", 1}});
    b.release("x2", Type::Fail, json{{"result", "not-owner"}});
    all.push_back(
        b.done({x1_acquire, x2_acquire - 1, x2_acquire, release, release + 1}, {"x1", "x2"}));
  }
  {
    // x1 crashes inside its acquire; x2 and x3 then fail for 4 ms (TTL 1 ms).
    PlantBuilder b("liveness", "liveness");
    const json ttl{{"ttl_ms", 1}};
    b.add("x1", Type::Invoke, "acquire", ttl);
    const size_t crash = b.add("nemesis", Type::Info, "crash-client",
                               json{{"phase", "start"}, {"targets", {"x1"}}}, std::nullopt, 1000);
    const size_t first = b.add("x2", Type::Invoke, "acquire", ttl, std::nullopt, 1000);
    b.add("x2", Type::Fail, "acquire", nullptr, std::nullopt, 2'000'000);
    b.add("x3", Type::Invoke, "acquire", ttl, std::nullopt, 1000);
    const size_t last = b.add("x3", Type::Fail, "acquire", nullptr, std::nullopt, 2'000'000);
    all.push_back(b.done({crash, first, last}, {"x1", "x2", "x3"}));
  }
  {
    // The same with a partition in force at first: only what follows its end
    // counts, and that is still 4 ms of failures.
    PlantBuilder b("liveness/after-a-fault", "liveness");
    const json ttl{{"ttl_ms", 1}};
    b.add("nemesis", Type::Info, "partition", json{{"phase", "start"}, {"fault", 90}});
    b.add("x1", Type::Invoke, "acquire", ttl);
    const size_t crash = b.add("nemesis", Type::Info, "crash-client",
                               json{{"phase", "start"}, {"targets", {"x1"}}}, std::nullopt, 1000);
    const size_t first = b.add("x2", Type::Invoke, "acquire", ttl, std::nullopt, 1000);
    const size_t healed = b.add("nemesis", Type::Info, "partition",
                                json{{"phase", "end"}, {"fault", 90}}, std::nullopt, 5'000'000);
    b.add("x2", Type::Fail, "acquire", nullptr, std::nullopt, 1000);
    b.add("x3", Type::Invoke, "acquire", ttl, std::nullopt, 1000);
    const size_t last = b.add("x3", Type::Fail, "acquire", nullptr, std::nullopt, 4'000'000);
    all.push_back(b.done({crash, first, healed, last}, {"x1", "x2", "x3"}));
  }
  {
    PlantBuilder b("reentrancy/depth", "reentrancy");
    const size_t first = b.acquire("x1", json{{"reentry", 1}});
    const size_t second = b.acquire("x1", json{{"reentry", 3}});
    for (int remaining : {2, 1, 0}) b.release("x1", Type::Ok, json{{"remaining", remaining}});
    all.push_back(b.done({first, second}, {"x1"}));
  }
  {
    PlantBuilder b("reentrancy/not-held", "reentrancy");
    const size_t release = b.release("x1", Type::Ok, json{{"result", "released"}});
    all.push_back(b.done({release, release + 1}, {"x1"}));
  }
  return all;
}

}  // namespace

std::vector<Event> correct_history(const std::vector<uint32_t>& choices) {
  return Model(choices).run();
}

const std::vector<Plant>& plants() {
  static const std::vector<Plant> all = make_plants();
  return all;
}

std::vector<int64_t> interleave(std::vector<Event>& history, const Plant& plant,
                                const std::vector<uint32_t>& choices) {
  Choices choose(choices);
  // The plant keeps its own timeline, starting anywhere in the history's;
  // the history's times stay as they are (its model relies on them).
  const int64_t span_ns = history.empty() ? 0 : history.back().time_ns;
  int64_t time_ns = int64_t(choose.below(uint32_t(std::min<int64_t>(span_ns, 1 << 30) + 1)));
  std::vector<Event> planted = plant.events;
  for (size_t i = 0; i < planted.size(); ++i) {
    time_ns += plant.gaps_ns[i];
    planted[i].time_ns = time_ns;
  }
  std::vector<Event> merged;
  std::vector<int64_t> plant_indices;
  size_t h = 0, p = 0;
  while (h < history.size() || p < planted.size()) {
    const bool take_plant =
        p < planted.size() && (h == history.size() || planted[p].time_ns < history[h].time_ns ||
                               (planted[p].time_ns == history[h].time_ns && choose.below(2)));
    Event e = take_plant ? std::move(planted[p++]) : std::move(history[h++]);
    e.index = int64_t(merged.size());
    if (take_plant) plant_indices.push_back(e.index);
    merged.push_back(std::move(e));
  }
  history = std::move(merged);
  return plant_indices;
}

std::vector<int64_t> shuffle_ties(std::vector<Event>& history,
                                  const std::vector<uint32_t>& choices) {
  Choices choose(choices);
  std::vector<int64_t> new_index(history.size());
  std::vector<Event> shuffled;
  for (size_t begin = 0; begin < history.size();) {
    size_t end = begin;
    while (end < history.size() && history[end].time_ns == history[begin].time_ns) ++end;
    // One queue per process within the instant, taken from in random turns.
    std::vector<std::vector<size_t>> queues;
    std::vector<std::string> owners;
    for (size_t i = begin; i < end; ++i) {
      auto it = std::find(owners.begin(), owners.end(), history[i].process);
      if (it == owners.end()) {
        owners.push_back(history[i].process);
        queues.emplace_back();
        it = owners.end() - 1;
      }
      queues[size_t(it - owners.begin())].push_back(i);
    }
    std::vector<size_t> taken(queues.size(), 0);
    for (size_t left = end - begin; left > 0; --left) {
      size_t q = choose.below(uint32_t(queues.size()));
      while (taken[q] == queues[q].size()) q = (q + 1) % queues.size();
      const size_t old = queues[q][taken[q]++];
      new_index[old] = int64_t(shuffled.size());
      shuffled.push_back(std::move(history[old]));
      shuffled.back().index = new_index[old];
    }
    begin = end;
  }
  history = std::move(shuffled);
  return new_index;
}

void add_noise(std::vector<Event>& history, const std::vector<uint32_t>& choices) {
  Choices choose(choices);
  for (Event& e : history) {
    switch (choose.below(6)) {
      case 0:
        e.extra =
            json{{"note", "n" + std::to_string(choose.below(1000))}, {"list", {1, "two", nullptr}}};
        break;
      case 1:
        e.node = "127.0.0.1:" + std::to_string(6000 + choose.below(100));
        break;
      case 2:
        e.error = "something " + std::to_string(choose.below(1000));
        break;
      case 3:
        e.owner = std::to_string(choose.below(1u << 30));
        break;
      case 4:
        e.client_time_ns = int64_t(choose.below(1u << 30)) - (1 << 29);
        break;
      default:
        break;
    }
  }
}

}  // namespace locklab::testing
