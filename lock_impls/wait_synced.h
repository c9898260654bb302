#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_wait_synced(const LockContext& context);
}
