// The table of built-in algorithms: id, one-line description, lab features,
// and the factory. Adding an algorithm = one file + one row here.
#include <stdexcept>

#include "lock.h"
#include "set_nx_px.h"

namespace locklab {
namespace {

struct Entry {
  AlgorithmInfo info;
  std::unique_ptr<Lock> (*make)(const LockContext&);
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = {
      {{"set-nx-px", "SET key owner NX PX ttl; release and extend by Lua compare-and-delete/-pexpire",
        false, false, false, false},
       make_set_nx_px},
  };
  return table;
}

}  // namespace

const std::vector<AlgorithmInfo>& algorithms() {
  static const std::vector<AlgorithmInfo> infos = [] {
    std::vector<AlgorithmInfo> out;
    for (const auto& e : entries()) out.push_back(e.info);
    return out;
  }();
  return infos;
}

std::unique_ptr<Lock> make_lock(const std::string& id, const LockContext& context) {
  for (const auto& e : entries())
    if (e.info.id == id) return e.make(context);
  std::string known;
  for (const auto& e : entries()) known += (known.empty() ? "" : ", ") + e.info.id;
  throw std::invalid_argument("unknown algorithm '" + id + "' (known: " + known + ")");
}

}  // namespace locklab
