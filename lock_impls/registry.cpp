// The table of built-in algorithms: id, one-line description, lab features,
// and the factory. Adding an algorithm = one file + one row here.
#include <stdexcept>

#include "fenced.h"
#include "lock.h"
#include "redisson_hash.h"
#include "redlock.h"
#include "set_nx_px.h"
#include "setnx_expire.h"
#include "setnx_getset.h"
#include "setnx_getset_lua.h"
#include "wait_synced.h"

namespace locklab {
namespace {

struct Entry {
  AlgorithmInfo info;
  std::unique_ptr<Lock> (*make)(const LockContext&);
};

const std::vector<Entry>& entries() {
  // In the order of the design's history: the old recipes, the single-instance
  // lock, Redisson's, Redlock, fencing, replica-synced.
  static const std::vector<Entry> table = {
      {{.id = "setnx-getset",
        .description = "classic SETNX <deadline> / GET / GETSET recipe, deadlines by client clock; "
                       "unlock = plain DEL",
        .family = "old recipe",
        .steps = setnx_getset_steps(false),
        .envelope = setnx_getset_envelope()},
       make_setnx_getset},
      {{.id = "setnx-getset-safe-unlock",
        .description =
            "setnx-getset, but unlock DELs only while the client's own deadline has not passed",
        .family = "old recipe",
        .steps = setnx_getset_steps(true),
        .envelope = setnx_getset_envelope()},
       make_setnx_getset_safe_unlock},
      {{.id = "setnx-getset-lua",
        .description =
            "setnx-getset in one Lua script with client timestamps and PEXPIRE; unlock = plain DEL",
        .family = "old recipe",
        .envelope = setnx_getset_lua_envelope()},
       make_setnx_getset_lua},
      {{.id = "setnx-expire",
        .description = "SETNX then a separate EXPIRE (not atomic); release by compare-and-delete",
        .family = "old recipe",
        .steps = setnx_expire_steps(),
        .envelope = setnx_expire_envelope()},
       make_setnx_expire},
      {{.id = "set-nx-px",
        .description =
            "SET key owner NX PX ttl; release and extend by Lua compare-and-delete/-pexpire",
        .family = "single instance",
        .envelope = set_nx_px_envelope()},
       make_set_nx_px},
      {{.id = "redisson-hash",
        .description = "Redisson RLock: re-entrant hash lock, watchdog renewal every ttl/3, "
                       "pub/sub unlock wake-up",
        .family = "Redisson-style",
        .reentrant = true,
        .envelope = redisson_hash_envelope()},
       make_redisson_hash},
      {{.id = "redlock",
        .description = "Redlock over N >= 3 independent masters: majority and validity = ttl - "
                       "elapsed - drift",
        .family = "Redlock",
        .multi_node = true,
        .steps = redlock_steps(),
        .envelope = redlock_envelope()},
       make_redlock},
      {{.id = "fenced",
        .description = "set-nx-px plus a fencing token from INCR on <name>:fence, in one script",
        .family = "fenced",
        .fencing = true,
        .envelope = fenced_envelope()},
       make_fenced},
      {{.id = "wait-synced",
        .description =
            "set-nx-px followed by WAIT for replicas; released again if too few acknowledge",
        .family = "replica-synced",
        .needs_replica = true,
        .steps = wait_synced_steps(),
        .envelope = wait_synced_envelope()},
       make_wait_synced},
  };
  return table;
}

const Entry* entry_named(std::string_view id) {
  for (const auto& e : entries())
    if (e.info.id == id) return &e;
  return nullptr;
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

const AlgorithmInfo* find_algorithm(std::string_view id) {
  const Entry* entry = entry_named(id);
  return entry ? &entry->info : nullptr;
}

const AlgorithmInfo& algorithm_info(std::string_view id) {
  if (const AlgorithmInfo* found = find_algorithm(id)) return *found;
  throw std::invalid_argument("unknown algorithm '" + std::string(id) +
                              "' (known: " + algorithm_ids() + ")");
}

std::string algorithm_ids() {
  std::string known;
  for (const auto& e : entries()) known += (known.empty() ? "" : ", ") + e.info.id;
  return known;
}

std::unique_ptr<Lock> make_lock(const std::string& id, const LockContext& context) {
  const Entry* entry = entry_named(id);
  if (!entry) algorithm_info(id);  // throws, naming the known ids
  return entry->make(context);
}

}  // namespace locklab
