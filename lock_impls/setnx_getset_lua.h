#pragma once
#include "lock.h"

namespace locklab {
std::unique_ptr<Lock> make_setnx_getset_lua(const LockContext& context);
}
