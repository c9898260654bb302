#include "shard.h"

#include <stdexcept>

namespace locklab {

Shard parse_shard(const std::string& text) {
  Shard shard;
  bool valid = false;
  if (size_t slash = text.find('/'); slash != std::string::npos) {
    const std::string index = text.substr(0, slash), count = text.substr(slash + 1);
    try {
      size_t index_used = 0, count_used = 0;
      shard.index = std::stoi(index, &index_used);
      shard.count = std::stoi(count, &count_used);
      valid = index_used == index.size() && count_used == count.size() && shard.index >= 1 &&
              shard.index <= shard.count;
    } catch (const std::logic_error&) {  // std::stoi: not a number, or out of range
    }
  }
  if (!valid)
    throw std::invalid_argument("--shard: expected I/N with 1 <= I <= N (e.g. 2/4), got \"" + text +
                                "\"");
  return shard;
}

}  // namespace locklab
