#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_fenced(const LockContext& context);
}
