// The time a fault test waited, in whole milliseconds.
#pragma once

#include <chrono>

namespace locklab::testing {

inline std::chrono::milliseconds elapsed_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

}  // namespace locklab::testing
