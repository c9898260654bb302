#pragma once
#include "lock.h"
#include "set_nx_px.h"

namespace locklab {
std::unique_ptr<Lock> make_fenced(const LockContext& context);

// Its safety envelope: set-nx-px's, since the lease is the same key with
// the same TTL; the fencing token protects the store but not the lock: two
// clients still hold it at once. The store rejects a write whose token is
// lower than one it has accepted, so a late write is stopped only once the
// new holder has written: on the pause axis a pause just past the half
// lease lets c1's write land while c2 works on what it read before, and
// c2's write then loses c1's update (the envelope's harm bound); a longer
// pause is rejected whole.
inline EnvelopePredictions fenced_envelope() {
  return set_nx_px_envelope();
}
}  // namespace locklab
