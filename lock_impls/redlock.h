#pragma once
#include "lock.h"

namespace locklab {
// Needs context.node_count >= 3 independent masters; throws std::invalid_argument otherwise.
std::unique_ptr<Lock> make_redlock(const LockContext& context);
// The steps a Redlock client offers (redlock.cpp's header says where).
const std::vector<std::string>& redlock_steps();
}  // namespace locklab
