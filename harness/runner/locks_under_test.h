// Which locks and servers a command tests, resolved once before anything
// runs: a built-in algorithm, an adapter program (--adapter, --like), or an
// entry of a libraries file (--libraries); the lab's own servers, which
// need redis-server installed, or a target (--target). Every command of the
// CLI resolves through here, so each is asked in one way and fails with the
// same words.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plan.h"
#include "target.h"

namespace locklab {

// The lock of an adapter program: `command`, started once and asked hello
// (AdapterError when it cannot answer), standing in for the built-in
// `like` ("" for none). Asked once, before anything runs: a broken adapter
// is one error, not one per cell.
LockUnderTest adapter_lock(const std::string& command, const std::string& like);

// The adapter_lock of `command` and `like`, or nullopt when `command` is "".
std::optional<LockUnderTest> adapter_lock_if_given(const std::string& command,
                                                   const std::string& like);

// Every built-in algorithm, then each library of `libraries_file` (none when
// ""), asked hello once, but none whose declared name a non-empty `wanted`
// leaves out (load_libraries). Throws LibrariesError (libraries.h).
std::vector<LockUnderTest> built_ins_and_libraries(const std::string& libraries_file,
                                                   const std::vector<std::string>& wanted = {});

// `locks` with every adapter kept between runs in `pool` (null: each run
// starts its own), and the clocks of adapters on clocks of their own kept
// beside it (AdapterClocks), so that those are kept too.
std::vector<LockUnderTest> with_adapters_kept(std::vector<LockUnderTest> locks,
                                              const std::shared_ptr<AdapterPool>& pool);

// The lock named `name` among `locks` (a built-in id, an adapter's or a
// library's name), or nullptr.
const LockUnderTest* find_lock(const std::vector<LockUnderTest>& locks, const std::string& name);

// The target of `file`, read and checked before anything runs: every
// endpoint answers with the credentials it names. Throws a one-line error
// naming the file, field or endpoint. Empty `file`: nullptr.
std::shared_ptr<const Target> load_checked_target(const std::string& file);

// Throws std::runtime_error when runs on `servers` would start servers of
// the lab's own (no target) and redis-server is not installed.
void require_redis_server(const Servers& servers);

// The servers of `target_file` (load_checked_target), or the lab's own when
// it is "", checked with require_redis_server; the runs on them keep `time`
// ("real", "virtual" or "auto": time_mode_named).
Servers checked_servers(const std::string& target_file, const std::string& time = "real");

}  // namespace locklab
