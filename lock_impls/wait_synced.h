#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_wait_synced(const LockContext& context);
// The steps a wait-synced client offers (wait_synced.cpp's header says where).
const std::vector<std::string>& wait_synced_steps();
}  // namespace locklab
