#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_set_nx_px(const LockContext& context);
}
