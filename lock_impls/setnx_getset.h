#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_setnx_getset(const LockContext& context);
std::unique_ptr<Lock> make_setnx_getset_safe_unlock(const LockContext& context);
// The steps each variant offers (setnx_getset.cpp's header says where).
const std::vector<std::string>& setnx_getset_steps(bool safe_unlock);
}  // namespace locklab
