#include "envelope_axis.h"

#include "word_table.h"

namespace locklab {

namespace {

// One row per axis, in enum order (the table checks it at compile time).
constexpr WordTable<EnvelopeAxisInfo, &EnvelopeAxisInfo::axis, 6> kEnvelopeAxes({
    {EnvelopeAxis::Pause, "pause", EnvelopeUnit::Lease, 0, 3, 0.02,
     "c1 paused (stop-the-world) right before its write"},
    {EnvelopeAxis::ClientClockFast, "client-clock-fast", EnvelopeUnit::Rate, 1, 8, 0.05,
     "c2's clock runs fast from the start"},
    {EnvelopeAxis::ClientClockSlow, "client-clock-slow", EnvelopeUnit::Rate, 1, 0.1, 0.02,
     "c1's clock runs slow from the start"},
    {EnvelopeAxis::ServerClockJump, "server-clock-jump", EnvelopeUnit::Lease, 0, 3, 0.02,
     "node 0's clock jumps forward once c1 holds the lock"},
    // Up to 0.9 lease each way, not 1: a round trip of two leases is 1 s,
    // the command timeout the adapters give their clients (ioredis,
    // redis-py, Redisson, go-redis), and whether a reply that comes back as
    // the timeout fires counts as a vote is a race.
    // A search's first probe of a repeat is its harsh end, so a race there
    // decided whole searches (a lock that breaks from half a lease on
    // reported never, or a bound, from run to run).
    {EnvelopeAxis::Delay, "delay", EnvelopeUnit::Lease, 0, 0.9, 0.02,
     "latency each way on c1's links to every node"},
    {EnvelopeAxis::Partition, "partition", EnvelopeUnit::Lease, 0, 3, 0.02,
     "c1's links go dark once it holds the lock"},
});

}  // namespace

const std::vector<EnvelopeAxisInfo>& envelope_axes() {
  static const std::vector<EnvelopeAxisInfo> axes(kEnvelopeAxes.begin(), kEnvelopeAxes.end());
  return axes;
}

const EnvelopeAxisInfo& info(EnvelopeAxis axis) {
  return kEnvelopeAxes[axis];
}

std::optional<EnvelopeAxis> envelope_axis_named(std::string_view name) {
  return kEnvelopeAxes.named(name);
}

std::string envelope_axis_names() {
  return kEnvelopeAxes.list();
}

const EnvelopePrediction* find_prediction(const EnvelopePredictions& predictions,
                                          EnvelopeAxis axis) {
  for (const auto& prediction : predictions)
    if (prediction.axis == axis) return &prediction;
  return nullptr;
}

}  // namespace locklab
