// A fault as a value: what, where, when, for how long. Scenarios list them;
// the nemesis applies and undoes them and records both in the history.
// Which fields a kind reads is the fault vocabulary's (fault_kind.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fault_kind.h"

namespace locklab {

// A client step that fires a fault or ends its wait: the nth time `client`
// reaches `step` ("acquired", "before-write", "after-send", …), and `after_ms`
// later: a time counted from a client's step rather than from the run's start
// ("1.5 s after c1 acquired", whatever the acquire cost).
struct StepTrigger {
  std::string client;
  std::string step;
  int nth = 1;
  int64_t after_ms = 0;
};

struct Fault {
  FaultKind kind = FaultKind::Pause;
  std::optional<int64_t> at_ms;        // from the start of the run, or
  std::optional<StepTrigger> when;     // right after a client step
  std::optional<int64_t> duration_ms;  // undone after this long (absent: lasts to the end)
  // And not before this client step, or its after_ms past it: with
  // duration_ms too, undone at the later of the two. A step reached before
  // the fault fired counts as reached, from when it was.
  std::optional<StepTrigger> until;
  // Or not before fault `until_fault_ends` of the schedule has recorded its
  // end (a failover, for one): "c2 starts once the failover is done". A
  // fault that never fires or never ends in the run holds it to the run's end.
  std::optional<size_t> until_fault_ends;
  // Targets, read as info(kind).target says: client ids (empty = every
  // client, or the trigger client for pause/crash-client) and server indices
  // (empty = every master), or for a fault on node 0's replication or master
  // group, replica numbers (0 = its first replica).
  std::vector<std::string> clients;
  std::vector<int> nodes;
  // The algorithms whose runs it belongs to (empty: every run), for a story
  // whose step differs between algorithms.
  std::vector<std::string> algorithms;
  // A name this fault shares with the story's other ways of telling the same
  // moment ("whoever takes over: c2's pause or c3's"): a run plays the story
  // when at least one fault of the name fired. Empty: this one must fire.
  std::string one_of;
  // Kind-specific parameters (fault_kind.cpp lists which kind has which).
  int64_t delta_ms = 0;
  double rate = 1.0;
  int64_t delay_ms = 0, jitter_ms = 0;
  PartitionHow how = PartitionHow::Blackhole;
  std::optional<int64_t> restart_after_ms;
  FailoverMode mode = FailoverMode::Sentinel;

  // The kind's name ("pause", …).
  std::string_view name() const { return locklab::name(kind); }

  // What it needs of a run: its kind's needs and its choices' (a Sentinel failover needs
  // Sentinels).
  Needs needs() const;

  // The fault as recorded in the history's nemesis events: its trigger,
  // duration and the parameters of its kind.
  nlohmann::json describe() const;

  // "at 1200 ms" or "c1 at step acquired (1st time)".
  std::string trigger_text() const;

  // Whether it waits for something before it is undone (`until` or
  // `until_fault_ends`).
  bool waits() const { return until || until_fault_ends; }

  // Whether it records an end of its own once fired: it is undone after a
  // duration or a wait, restarts what it crashed, or finishes a failover.
  bool ends() const;

  // Whether it is part of a run of `algorithm` ("" = a lock that stands in
  // for no built-in algorithm: only faults without an algorithm list).
  bool applies_to(std::string_view algorithm) const;

  // The name of the value of the choice parameter `param` ("how", "mode").
  // Throws std::invalid_argument when `param` is not a choice of a fault.
  std::string choice(std::string_view param) const;
  // Sets it to the value named `value`. Throws std::invalid_argument when
  // `param` is not a choice of a fault, or `value` is none of its choices.
  void set_choice(std::string_view param, std::string_view value);

  // The numeric parameter `param` ("at_ms", "duration_ms" or one of the
  // kind's), as a double; nullopt when it is not set.
  std::optional<double> number(std::string_view param) const;
  // Sets it (rounded for integer parameters). Throws std::invalid_argument
  // when `param` is not a numeric field of a fault.
  void set_number(std::string_view param, double value);
};

// What the faults need of a run, together.
Needs needs_of(const std::vector<Fault>& faults);

}  // namespace locklab
