#pragma once
#include "lock.h"
#include "set_nx_px.h"

namespace locklab {
std::unique_ptr<Lock> make_wait_synced(const LockContext& context);
// The steps a wait-synced client offers (wait_synced.cpp's header says where).
const std::vector<std::string>& wait_synced_steps();

// Its safety envelope: set-nx-px's (node 0 is the master, whose clock
// expires the key; a replica deletes it when the master does), except:
//   delay  1/6 L  SET and then WAIT each take a round trip: c1 holds from
//                 four delays after it sent SET, the key expires a lease
//                 after one: they overlap once 3·delay > L - L/2
inline EnvelopePredictions wait_synced_envelope() {
  EnvelopePredictions predictions = set_nx_px_envelope();
  for (auto& p : predictions)
    if (p.axis == EnvelopeAxis::Delay)
      p = {EnvelopeAxis::Delay, 1.0 / 6,
           "SET and then WAIT each take a round trip, so c1 holds from four delays after the key "
           "was sent, which expires a lease after one: they overlap once three delays exceed the "
           "lease minus the work."};
  return predictions;
}
}  // namespace locklab
