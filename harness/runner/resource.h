// The protected resource: what the work under the lock changes. It lives in
// the harness process, outside every faulted component, so faults on the
// lock's Redis never touch it. One counter per lock name, updated by
// read-modify-write; in fencing mode it is Kleppmann's storage-side check and
// rejects a write whose token is lower than the highest it has accepted.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace locklab {

class ProtectedResource {
 public:
  explicit ProtectedResource(bool fencing) : fencing_(fencing) {}

  struct WriteResult {
    bool accepted = true;
    std::string reason;  // why it was rejected
  };

  // The counter of `lock` as it is now.
  int64_t read(const std::string& lock);
  // Sets the counter of `lock` to `value` unless fencing rejects `token`.
  // Writes without a token are never rejected (the algorithm has none).
  WriteResult write(const std::string& lock, int64_t value, std::optional<int64_t> token);

  std::map<std::string, int64_t> counters();

 private:
  struct Cell {
    int64_t value = 0;
    std::optional<int64_t> highest_token;
  };
  bool fencing_;
  std::mutex mu_;
  std::map<std::string, Cell> cells_;
};

}  // namespace locklab
