// Tests of code that waits (for a socket, a timer, a gate): it must behave
// the same on a thread of its own and as a fiber of run_fibers (fibers.h).
#pragma once

#include <gtest/gtest.h>

#include <functional>

#include "fibers.h"

namespace locklab {

// Runs `test` on the calling thread, then again as a fiber of run_fibers.
inline void on_a_thread_and_on_a_fiber(const std::function<void()>& test) {
  {
    SCOPED_TRACE("on a thread");
    test();
  }
  SCOPED_TRACE("on a fiber");
  run_fibers({test});
}

}  // namespace locklab
