#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_redisson_hash(const LockContext& context);

// Its safety envelope (envelope_axis.h: lease L, c1 works L/2, or 1.5 L on the
// partition axis). The watchdog renews the lease every L/3 by c1's clock,
// gives up at the first failed renewal, and c1's lease has no deadline of
// its own to check:
//   pause              5/6 L  the last renewal, at L/3, put the expiry at 4/3 L;
//                             the pause starts at L/2 and freezes the watchdog too
//   client-clock-fast  never  c2's clock only times its own retries
//   client-clock-slow  1/3×   renewals L/(3·rate) apart in real time leave a lease
//                             unrenewed for longer than L below rate 1/3
//   server-clock-jump  2/3 L  the key expires before the first renewal at L/3 once
//                             the jump exceeds 2/3 L
//   delay              0.5 L  as set-nx-px: renewals arrive in time below L/3, and
//                             between L/3 and L/2 the key expires only after c1 let go
//   partition          1/3 L  the first renewal, at L/3, is lost in a longer partition
//                             and the watchdog gives up; the key expires at L while c1
//                             works until 1.5 L
inline EnvelopePredictions redisson_hash_envelope() {
  return {
      {EnvelopeAxis::Pause, 5.0 / 6,
       "The watchdog last renewed the lease a third of a lease after the acquire, so the key "
       "expires 4/3 leases after it; the pause, which freezes the watchdog too, starts half a "
       "lease in."},
      {EnvelopeAxis::ClientClockFast, std::nullopt, "c2's clock only times its own retries."},
      {EnvelopeAxis::ClientClockSlow, 1.0 / 3,
       "The watchdog renews every third of a lease by c1's clock: below rate 1/3 renewals are "
       "more than a lease apart in real time and the key expires while c1 works."},
      {EnvelopeAxis::ServerClockJump, 2.0 / 3,
       "A jump of more than 2/3 of a lease expires the key before the watchdog's first renewal, "
       "a third of a lease after the acquire."},
      {EnvelopeAxis::Delay, 0.5,
       "Renewals arrive in time while the delay is below a third of a lease; beyond, the key "
       "expires a lease after it was set, which overlaps c1's hold (two delays and half a "
       "lease) once the delay exceeds half a lease."},
      {EnvelopeAxis::Partition, 1.0 / 3,
       "The first renewal, a third of a lease after the acquire, is lost in a longer partition "
       "and the watchdog gives up: the key expires at one lease while c1 works for 1.5."},
  };
}
}  // namespace locklab
