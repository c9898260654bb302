#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_redisson_hash(const LockContext& context);
}
