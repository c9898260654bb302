#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_setnx_expire(const LockContext& context);
// The steps a setnx-expire client offers (setnx_expire.cpp's header says where).
const std::vector<std::string>& setnx_expire_steps();
}  // namespace locklab
