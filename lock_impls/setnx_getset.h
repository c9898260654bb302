#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_setnx_getset(const LockContext& context);
std::unique_ptr<Lock> make_setnx_getset_safe_unlock(const LockContext& context);
}  // namespace locklab
