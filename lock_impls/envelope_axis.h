// Safety envelopes: how much of one fault a lock survives, and what its
// design predicts. The lab measures an envelope by playing one fixed story
// per fault axis at ever closer fault sizes (harness/suite/envelope.h); each
// algorithm states beside its code the bound its design implies in that
// story, so that a measurement can be held against it.
//
// The story (the same for every lock, every axis):
//   c1 takes lock "L" with a lease of kEnvelopeLeaseMs; c2 waits for it,
//   starting late so that c1 is first. c1 works for kEnvelopeWork of the
//   lease (kEnvelopePartitionWork on the partition axis), checks its lease
//   by its own clock, writes and releases; each client runs one operation.
//   The fault is one of the axes below, applied at its size x.
//   Each axis has two bounds: where the two clients first held the lock at
//   once (mutual-exclusion), which is what a design predicts, and where the
//   protected store was first harmed (it accepted a stale write or lost an
//   update), which is where the lock breaks for its user; fencing, or c1's
//   own check of its lease, can put the second beyond the first.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locklab {

inline constexpr long kEnvelopeLeaseMs = 500;
inline constexpr double kEnvelopeWork = 0.5;           // of the lease
inline constexpr double kEnvelopePartitionWork = 1.5;  // of the lease: longer than it

enum class EnvelopeAxis {
  Pause,            // c1 stops the world right before its write, x leases long
  ClientClockFast,  // c2's clock runs x times real time from the start
  ClientClockSlow,  // c1's clock runs at rate x (< 1) from the start
  ServerClockJump,  // node 0's clock jumps x leases forward once c1 holds the lock
  Delay,            // c1's links to every node carry x leases of latency each way
  Partition,        // c1's links go dark (blackhole) for x leases once it holds the lock
};

// The unit an axis's sizes are in.
enum class EnvelopeUnit {
  Lease,  // multiples of the lease: 0.5 = half of it
  Rate,   // a clock's rate: 2 = twice as fast, 0.5 = half as fast
};

struct EnvelopeAxisInfo {
  EnvelopeAxis axis;
  std::string_view name;  // "pause", as envelope.json and --axis spell it
  EnvelopeUnit unit;
  // Sizes are searched from `gentle` to `harsh`; a rate that slows a clock
  // is harsher the smaller it is.
  double gentle = 0, harsh = 0;
  double precision = 0;    // the search stops when the bound is known this closely
  std::string_view fault;  // what the fault at size x is, for people
};

// Every axis, in the order tables and charts show them.
const std::vector<EnvelopeAxisInfo>& envelope_axes();

// The row of `axis`.
const EnvelopeAxisInfo& info(EnvelopeAxis axis);

// The axis named `name`, or nullopt.
std::optional<EnvelopeAxis> envelope_axis_named(std::string_view name);

// "pause, client-clock-fast, …": every name, for messages.
std::string envelope_axis_names();

// What a design predicts on one axis of the story above.
struct EnvelopePrediction {
  EnvelopeAxis axis;
  // The smallest size at which the holds overlap, in the axis's unit: 0 when
  // the story overlaps them without any fault; nullopt when nothing in the
  // axis's range does.
  std::optional<double> bound;
  std::string why;  // one sentence from the design
};

using EnvelopePredictions = std::vector<EnvelopePrediction>;

// The prediction for `axis` among `predictions`, or nullptr when none is given.
const EnvelopePrediction* find_prediction(const EnvelopePredictions& predictions,
                                          EnvelopeAxis axis);

}  // namespace locklab
