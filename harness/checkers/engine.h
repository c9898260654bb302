// The machinery every checker shares: one pass over the events, pairing each
// completion with its invoke, tracking holds (FORMAT.md "Holds"), and
// handing each kind of checker what it needs. Internal to checkers/.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "checkers.h"
#include "holds.h"
#include "reader.h"

namespace locklab::checkers {

using ProcessId = int32_t;
using LockId = int32_t;
constexpr LockId kNoLock = -1;

// Where an event sits in the history.
struct Ref {
  int64_t index = -1;  // -1: no event
  int64_t time_ns = 0;
  explicit operator bool() const { return index >= 0; }
};

// Sets v.events and v.times_ns from `refs` in index order, skipping empty ones.
void set_events(Violation& v, std::initializer_list<Ref> refs);
void set_events(Margin& m, std::initializer_list<Ref> refs);

// "event 17"
inline std::string event_text(Ref ref) {
  return "event " + std::to_string(ref.index);
}

enum class Op { Acquire, Release, Extend, Write, Lost, Renewed, Incident, Other };
constexpr unsigned kOps = unsigned(Op::Other) + 1;
constexpr unsigned bit(Op op) {
  return 1u << unsigned(op);
}

// One client event, paired and resolved to ids.
struct Step {
  const history::EventView& event;
  Ref ref;
  ProcessId process;
  LockId lock;  // kNoLock when the event (and its invoke) names none
  Op op;
  history::Type type;
  Ref invoke;  // for a completion: its invoke
  bool dead;   // the process was named by a crash-client event before this event
};

// A hold (FORMAT.md): from an acquire ok to the event that ends it.
struct Hold {
  LockId lock;
  ProcessId process;
  Ref start;
};

// Interned names: ids are dense, in order of first appearance.
class Names {
 public:
  int32_t intern(std::string_view name) {
    // Most lookups hit a small cache slot picked by the name's shape.
    Slot& slot = cache_[(name.size() * 31 + (name.empty() ? 0 : uint8_t(name.back()))) % kSlots];
    if (slot.id >= 0 && names_[size_t(slot.id)] == name) return slot.id;
    auto it = ids_.find(name);
    if (it == ids_.end()) {
      names_.emplace_back(name);
      it = ids_.emplace(names_.back(), int32_t(names_.size() - 1)).first;
    }
    slot.id = it->second;
    return it->second;
  }
  const std::string& operator[](int32_t id) const { return names_[size_t(id)]; }
  size_t size() const { return names_.size(); }

 private:
  static constexpr size_t kSlots = 64;
  struct Slot {
    int32_t id = -1;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
  std::vector<std::string> names_;
  Slot cache_[kSlots];
};

// Counts violations and other things per lock, and keeps the listed violations.
class Reporter {
 public:
  using Counter = size_t;

  explicit Reporter(const Options& options) : options_(options) {}

  // The counter named `name` ("mutual-exclusion", "holds", ...).
  Counter counter(const std::string& name);
  // Counts `n` violations of `kind` on `lock`; returns how many of them to
  // list, as many as the cap per kind still allows.
  size_t count(Counter kind, LockId lock, int64_t n);
  // Counts one violation; true when it should also be listed.
  bool count(Counter kind, LockId lock) { return count(kind, lock, 1) > 0; }
  // Adds a listed violation; its index stays valid for amend().
  size_t list(Violation violation);
  // Counts a stretch of availability lost under a fault on `lock`, and lists
  // it while the cap per kind allows.
  void list(LockId lock, Unavailability stretch);
  Violation& amend(size_t listed) { return listed_[listed]; }
  // Adds to a counter that is not a violation ("holds", "fencing-saved", ...).
  void add(Counter counter, LockId lock, int64_t n = 1);
  // Keeps `margin` as the closest call of its sort when it is closer than the one kept.
  static void keep_closer(std::optional<Margin>& kept, Margin margin) {
    if (!kept || margin.ms < kept->ms) kept = std::move(margin);
  }
  ClosestCall& closest_call() { return closest_call_; }

  Results results(const Names& locks);

 private:
  struct Count {
    std::string name;
    int64_t total = 0;
    std::vector<int64_t> per_lock;
    size_t listed = 0;
  };
  const Options& options_;
  std::vector<Count> counts_;
  std::vector<Violation> listed_;
  std::vector<Unavailability> unavailable_;
  ClosestCall closest_call_;
};

// Everything a kind of checker can read.
struct Context {
  const Options& options;
  const Names& processes;
  const Names& locks;
  Reporter& reporter;
  // The latest acquire ok of `process` on `lock` (nested ones included), if any.
  std::function<Ref(LockId, ProcessId)> latest_acquire;
  // Holds of `lock` open right now.
  std::function<int(LockId)> open_holds;
};

// One kind of checker. The engine calls, for each event in order: on_time()
// when time_ns moves forward, then, for a nemesis event, on_fault() and
// on_crash() for each live process a crash-client names, or on_step() for a
// client event; then on_hold_start() / on_hold_end() for the holds that
// event starts or ends. finish() at the end.
class Kind {
 public:
  virtual ~Kind() = default;
  // The operations whose events on_step() wants (bits of 1 << Op), and
  // whether it wants on_time() and the hold calls: the engine calls nothing else.
  virtual unsigned ops() const { return 0; }
  virtual bool wants_time() const { return false; }
  virtual bool wants_holds() const { return false; }
  virtual bool wants_faults() const { return false; }
  virtual void on_time(int64_t /*time_ns*/) {}
  virtual void on_fault(const history::EventView& /*nemesis*/, Ref /*ref*/) {}
  virtual void on_step(const Step& /*step*/) {}
  virtual void on_crash(ProcessId /*process*/, Ref /*crash*/) {}
  virtual void on_hold_start(const Hold& /*hold*/) {}
  virtual void on_hold_end(const Hold& /*hold*/, Ref /*end*/, HoldEnd /*how*/) {}
  // `replay` visits the whole history again, for checkers whose evidence
  // fell out of their bounded memory.
  using Replay = std::function<void(const std::function<void(const history::EventView&)>&)>;
  virtual void finish(const Replay& /*replay*/) {}
};

std::unique_ptr<Kind> make_mutual_exclusion(Context& context);
std::unique_ptr<Kind> make_writes(Context& context);  // lost-update, stale-write, fencing-saved
std::unique_ptr<Kind> make_token_order(Context& context);
std::unique_ptr<Kind> make_ownership(Context& context);
std::unique_ptr<Kind> make_liveness(Context& context);
std::unique_ptr<Kind> make_reentrancy(Context& context);

// Runs every kind over a history, one event at a time.
class Engine {
 public:
  // The kinds an engine runs, made once its Context exists.
  using MakeKinds = std::function<std::vector<std::unique_ptr<Kind>>(Context& context)>;

  // Every checker kind above.
  static std::vector<std::unique_ptr<Kind>> every_kind(Context& context);

  // `where(index)` names an event in structural error messages ("h.jsonl:18").
  // With `lenient`, an event that breaks the operation structure is no error:
  // an invoke replaces the operation in flight, and a completion that does
  // not pair with it keeps its own lock and has no invoke.
  Engine(const Options& options, std::function<std::string(int64_t index)> where,
         const MakeKinds& make_kinds = every_kind, bool lenient = false);
  ~Engine();

  // Throws history::HistoryError when the event breaks the operation
  // structure (a completion without its invoke, two operations in flight),
  // unless the engine is lenient.
  void observe(const history::EventView& event);
  Results finish(const Kind::Replay& replay);

 private:
  struct Operation {
    int32_t f = -1;  // an Op, or Op::Other + the interned f; -1: none in flight
    LockId lock = kNoLock;
    Ref invoke;
  };
  struct ProcessState {
    bool dead = false;
    Operation in_flight;
  };
  struct Holding {
    int depth = 0;
    Ref start;
    Ref latest_acquire;
  };

  Holding& holding(LockId lock, ProcessId process);
  void crash(ProcessId process, Ref ref);
  void end_hold(LockId lock, ProcessId process, Ref end, HoldEnd how);
  std::string f_name(int32_t f) const;
  [[noreturn]] void structure_error(const Step& step, const std::string& what);

  Options options_;
  std::function<std::string(int64_t)> where_;
  const bool lenient_;
  Names processes_, locks_, fs_;
  std::vector<ProcessState> process_states_;
  std::vector<std::vector<Holding>> holdings_;  // [lock][process]
  std::vector<int> open_holds_;                 // [lock]
  Reporter reporter_;
  Reporter::Counter holds_ = 0;
  Context context_;
  std::vector<std::unique_ptr<Kind>> kinds_;
  std::vector<Kind*> by_op_[kOps];  // the kinds that want each Op
  std::vector<Kind*> time_kinds_;   // the kinds that want on_time()
  std::vector<Kind*> hold_kinds_;   // the kinds that want on_hold_start() / on_hold_end()
  std::vector<Kind*> fault_kinds_;  // the kinds that want on_fault()
  int64_t time_ns_ = std::numeric_limits<int64_t>::min();
  int64_t events_ = 0;
};

}  // namespace locklab::checkers
