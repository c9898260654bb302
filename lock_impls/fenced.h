#pragma once
#include "lock.h"
#include "set_nx_px.h"

namespace locklab {
std::unique_ptr<Lock> make_fenced(const LockContext& context);

// Its safety envelope: set-nx-px's, since the lease is the same key with
// the same TTL; the fencing token protects the store (a stale write is
// rejected) but not the lock: two clients still hold it at once.
inline EnvelopePredictions fenced_envelope() {
  return set_nx_px_envelope();
}
}  // namespace locklab
