// A share of a job spread over machines (--shard I/N): a suite's cells or an
// exploration's generated scenarios, split the same way on every machine.
#pragma once

#include <string>

namespace locklab {

// Shard I of N (1-based), as given by --shard I/N.
struct Shard {
  int index = 1;
  int count = 1;
};

// Parses "I/N". Throws std::invalid_argument unless both are integers with
// 1 <= I <= N.
Shard parse_shard(const std::string& text);

}  // namespace locklab
