#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_setnx_expire(const LockContext& context);
// The steps a setnx-expire client offers (setnx_expire.cpp's header says where).
const std::vector<std::string>& setnx_expire_steps();

// Its safety envelope (envelope_axis.h: lease L = 500 ms, c1 works L/2). EXPIRE
// takes whole seconds, so the key lives 1 s = 2 L from the EXPIRE on, twice
// the lease the client asked for and believes in:
//   pause              1.5 L  the key outlives the work by 1.5 L
//   client-clock-fast  never  expiry is the server's
//   client-clock-slow  0.25×  c1's work, (L/2)/rate in real time, outlasts 2 L below 0.25
//   server-clock-jump  1.5 L  a jump past the 1.5 L left when the work ends expires the key
//   delay              never  the EXPIRE lands three delays after SETNX was sent, the
//                             hold ends four delays and L/2 after: 1.5 L of delay, out of range
//   partition          never  the 1 s key outlives the 1.5 L of work; nothing needs renewing
inline EnvelopePredictions setnx_expire_envelope() {
  return {
      {EnvelopeAxis::Pause, 1.5,
       "EXPIRE takes whole seconds, so the 500 ms lease becomes a 1 s key, which outlives c1's "
       "half lease of work by 1.5 leases."},
      {EnvelopeAxis::ClientClockFast, std::nullopt, "Expiry is the server's."},
      {EnvelopeAxis::ClientClockSlow, 0.25,
       "c1's half lease of work, timed by its slow clock, outlasts the 1 s (two leases) key "
       "below rate 0.25."},
      {EnvelopeAxis::ServerClockJump, 1.5,
       "A jump larger than the 1.5 leases the 1 s key has left when c1's work ends expires it."},
      {EnvelopeAxis::Delay, std::nullopt,
       "The EXPIRE lands three delays after SETNX was sent and the key lives 1 s from then; c1 "
       "lets go four delays and half a lease after: only a delay of 1.5 leases would overlap."},
      {EnvelopeAxis::Partition, std::nullopt,
       "The 1 s key outlives the 1.5 leases (750 ms) of work, and nothing needs renewing; c1's "
       "own check stops its write at 500 ms."},
  };
}
}  // namespace locklab
