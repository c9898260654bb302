#pragma once
#include "lock.h"
#include "setnx_getset.h"

namespace locklab {
std::unique_ptr<Lock> make_setnx_getset_lua(const LockContext& context);

// Its safety envelope: setnx-getset's (the same client deadlines), except
// that the script also PEXPIREs the key a lease ahead:
//   server-clock-jump  0.5 L  a jump past the L/2 left when c1's work ends deletes the key
inline EnvelopePredictions setnx_getset_lua_envelope() {
  EnvelopePredictions predictions = setnx_getset_envelope();
  for (auto& p : predictions)
    if (p.axis == EnvelopeAxis::ServerClockJump)
      p = {EnvelopeAxis::ServerClockJump, 0.5,
           "The script also PEXPIREs the key a lease ahead: a jump larger than the half lease "
           "left when c1's work ends deletes it, and c2's SETNX succeeds."};
  return predictions;
}
}  // namespace locklab
