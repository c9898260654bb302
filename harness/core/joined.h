// One list in one line of prose or a message: "a, b, c".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace locklab {

// `items` in order, `separator` between each two; "" when there are none.
inline std::string joined(const std::vector<std::string>& items,
                          std::string_view separator = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

}  // namespace locklab
