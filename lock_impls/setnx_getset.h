#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_setnx_getset(const LockContext& context);
std::unique_ptr<Lock> make_setnx_getset_safe_unlock(const LockContext& context);
// The steps each variant offers (setnx_getset.cpp's header says where).
const std::vector<std::string>& setnx_getset_steps(bool safe_unlock);

// The safety envelope of both variants (envelope_axis.h: lease L, c1 works L/2).
// c1 stores a deadline by its own clock (its now + L); c2 takes the lock
// over once its own clock passes that deadline; the key has no TTL:
//   pause              0.5 L  c2 takes over a lease after c1's acquire
//   client-clock-fast  2×     c2's clock, rate× fast from the start, passes the
//                             deadline after L/rate; c1 holds for L/2
//   client-clock-slow  0.5×   c1's deadline is about a real lease ahead (its clock
//                             has drifted little at the acquire); its work lasts (L/2)/rate
//   server-clock-jump  never  no server clock is read
//   delay              0.25 L the deadline counts from when c1 sent SETNX, c1 holds
//                             until two delays and L/2 after: 2·delay > L/2
//   partition          0      nothing renews the lease; 1.5 L of work outlive it
inline EnvelopePredictions setnx_getset_envelope() {
  return {
      {EnvelopeAxis::Pause, 0.5,
       "c2 judges c1's deadline (c1's clock plus a lease) by its own clock and takes over a "
       "lease after the acquire, half a lease into the pause."},
      {EnvelopeAxis::ClientClockFast, 2,
       "c2's clock, running rate times fast from the start, passes c1's deadline after a lease "
       "divided by the rate, while c1 holds for half a lease: above rate 2 they overlap."},
      {EnvelopeAxis::ClientClockSlow, 0.5,
       "c1's slow clock has drifted little when it stamps its deadline, about a real lease "
       "ahead; its half lease of work, timed by that clock, outlasts it below rate 0.5."},
      {EnvelopeAxis::ServerClockJump, std::nullopt,
       "The deadline lives in the value and the key has no TTL: no server's clock is read."},
      {EnvelopeAxis::Delay, 0.25,
       "The deadline counts from when c1 sent SETNX, and c1 holds until two delays and its "
       "work after that: they overlap once two delays exceed the lease minus the work."},
      {EnvelopeAxis::Partition, 0,
       "Nothing renews the lease and 1.5 leases of work outlive it: c2 takes the lock while c1 "
       "works, partition or not."},
  };
}
}  // namespace locklab
