#pragma once
#include "lock.h"

namespace locklab {
// Needs context.node_count >= 3 independent masters; throws std::invalid_argument otherwise.
std::unique_ptr<Lock> make_redlock(const LockContext& context);
// The steps a Redlock client offers (redlock.cpp's header says where).
const std::vector<std::string>& redlock_steps();

// Its safety envelope (envelope_axis.h: lease L, c1 works L/2; five masters):
//   pause              0.5 L  the pause comes after the validity check; the keys expire
//                             a lease after they were set, on every master
//   client-clock-fast  never  c2's clock only times its own validity
//   client-clock-slow  0.5×   the drift allowance (1 % + 2 ms) covers clocks 1 % off:
//                             c1's L/2 of work by a slow clock outlasts the keys below 0.5
//   server-clock-jump  never  the jump expires the key on one master of five
//   delay              never  a reply later than the per-instance timeout (50 ms) is no
//                             vote: past 25 ms each way c1 never holds the lock, and
//                             below it the keys outlive c1's work
//   partition          0      nothing renews the lease; 1.5 L of work outlive it
inline EnvelopePredictions redlock_envelope() {
  return {
      {EnvelopeAxis::Pause, 0.5,
       "The pause comes after the validity check; the keys expire a lease after they were set, "
       "on every master, half a lease into the pause."},
      {EnvelopeAxis::ClientClockFast, std::nullopt,
       "c2's clock only times its own validity, which a fast clock makes shorter."},
      {EnvelopeAxis::ClientClockSlow, 0.5,
       "The drift allowance (1 % of the lease + 2 ms) covers a clock 1 % off: c1's half lease of "
       "work, timed by a clock slower than 0.5, outlasts the keys on every master."},
      {EnvelopeAxis::ServerClockJump, std::nullopt,
       "The jump expires the key on one master of five, and c2 needs three."},
      {EnvelopeAxis::Delay, std::nullopt,
       "A reply later than the per-instance timeout (50 ms) is no vote: beyond 25 ms each way c1 "
       "never holds the lock, and below that the keys outlive its work."},
      {EnvelopeAxis::Partition, 0,
       "Nothing renews the lease and 1.5 leases of work outlive it: c2 takes the lock while c1 "
       "works, partition or not."},
  };
}
}  // namespace locklab
