#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_set_nx_px(const LockContext& context);

// Its safety envelope (envelope_axis.h: lease L, c1 works L/2). The key expires
// a lease after the server set it, whatever any client believes:
//   pause              0.5 L  the pause comes after L/2 of work
//   client-clock-fast  never  no client's clock judges the lease
//   client-clock-slow  0.5×   c1's L/2 of work, timed by its clock, lasts (L/2)/rate
//   server-clock-jump  0.5 L  a jump past the L/2 left when the work ends expires the key
//   delay              0.5 L  the key is set one delay after c1 sent SET, c1 holds until
//                             two delays and L/2 after: it breaks when delay > L - L/2
//   partition          0      nothing renews the lease; the story's 1.5 L of work outlive it
inline EnvelopePredictions set_nx_px_envelope() {
  return {
      {EnvelopeAxis::Pause, 0.5,
       "The key expires a lease after it was set and the pause comes after half a lease of work: "
       "a pause longer than the other half lets c2 in."},
      {EnvelopeAxis::ClientClockFast, std::nullopt,
       "Expiry is the server's; c2's clock only times its own retries."},
      {EnvelopeAxis::ClientClockSlow, 0.5,
       "c1 times its half lease of work by its own clock and still finds its lease valid; below "
       "rate 0.5 that work outlasts the key's real lease."},
      {EnvelopeAxis::ServerClockJump, 0.5,
       "A jump larger than the half lease left when c1's work ends expires the key under it."},
      {EnvelopeAxis::Delay, 0.5,
       "The key is set one delay after c1 sends SET and c1 holds until two delays and its work "
       "after: they overlap once the delay exceeds the lease minus the work."},
      {EnvelopeAxis::Partition, 0,
       "Nothing renews the lease and 1.5 leases of work outlive it: c2 takes the lock while c1 "
       "works, partition or not (c1's own check then stops its write)."},
  };
}
}  // namespace locklab
