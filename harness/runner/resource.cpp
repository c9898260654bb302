#include "resource.h"

namespace locklab {

int64_t ProtectedResource::read(const std::string& lock) {
  std::lock_guard l(mu_);
  return cells_[lock].value;
}

ProtectedResource::WriteResult ProtectedResource::write(const std::string& lock, int64_t value,
                                                        std::optional<int64_t> token) {
  std::lock_guard l(mu_);
  Cell& cell = cells_[lock];
  if (fencing_ && token) {
    if (cell.highest_token && *token < *cell.highest_token)
      return {false, "fenced: token " + std::to_string(*token) + " < " +
                         std::to_string(*cell.highest_token) + " already accepted"};
    cell.highest_token = token;
  }
  cell.value = value;
  return {true, ""};
}

std::map<std::string, int64_t> ProtectedResource::counters() {
  std::lock_guard l(mu_);
  std::map<std::string, int64_t> out;
  for (const auto& [lock, cell] : cells_) out[lock] = cell.value;
  return out;
}

}  // namespace locklab
