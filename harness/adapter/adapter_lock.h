// A lock whose algorithm lives in an adapter program (PROTOCOL.md): the lab's
// Lock interface on one side, one adapter process per client on the other.
// The adapter reaches Redis through the client's fault proxies, so partitions
// and delays apply to it; a pause of the client stops the adapter too.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapter_process.h"
#include "lock.h"

namespace locklab {

// What an adapter says about itself in answer to "hello".
struct AdapterInfo {
  std::string name;  // e.g. "redis-py-lock": names the algorithm in results
  // The library and version it wraps, as comparisons print it ("redis-py 4.3.4"); may be empty.
  std::string version;
  bool reentrant = false;
  bool fencing = false;  // every successful acquire carries an integer token
  // It renews leases in the background (a watchdog, a refresh timer) and
  // answers "held": whether it still believes a lease is held.
  bool renews = false;
  // It takes its lock over several independent masters (Redlock) and wants
  // every one of them in --redis; absent: as the algorithm it stands in for.
  std::optional<bool> multi_node;
  // Steps inside its operations that it announces (PROTOCOL.md, "Steps"), so
  // that a scenario's fault can fire there.
  std::vector<std::string> steps;
  // It wants a "connect" request before the story's clock starts, to open
  // its connections and warm its runtime (PROTOCOL.md, "Connecting").
  bool connect = false;
  // It reports incidents and answers the "incidents" request at the end of a
  // run (PROTOCOL.md, "Incidents").
  bool incidents = false;
  // It reports every background renewal, dated by this machine's
  // CLOCK_MONOTONIC, and answers the "renewals" request at the end of a run
  // (PROTOCOL.md, "Renewals"); only with `renews`.
  bool renewals = false;
  // Its hello carried this machine's CLOCK_MONOTONIC ("monotonic_ns"): it may
  // date what it reports (renewals, an acquire's attempt_ns) by it.
  bool monotonic_clock = false;
  // It answers "reset" and may serve another run (PROTOCOL.md, "Kept
  // between runs"); kept only where AdapterConfig::pool is set.
  bool reusable = false;
};

// Starts the adapter (with a loopback endpoint where nothing listens: hello
// must not need Redis), says hello, stops it. Throws AdapterError.
AdapterInfo probe_adapter(const AdapterConfig& config);

class AdapterLock final : public Lock {
 public:
  // Starts the adapter of `config` for the client of `context` (or takes
  // one config.pool kept), with the client's endpoints
  // context.endpoint(0 .. node_count-1) as they are now, follows
  // context.gate (if set) with SIGSTOP/SIGCONT, says hello, and sends
  // "connect" when hello asks for it. Throws AdapterError if the adapter
  // cannot start, answers hello wrongly or cannot connect.
  AdapterLock(const AdapterConfig& config, const LockContext& context);
  // Stops the adapter; or, after finish() and with config.pool set, resets
  // a reusable one and leaves it in the pool. Either way a pool's adapter
  // leaves what it logged during this client in the client's log.
  ~AdapterLock() override;

  // Done / Refused / Unknown as the adapter answers (ok:true / ok:false /
  // ok:false with unknown:true). Throws AdapterError when the adapter fails
  // or breaks the protocol: that is no outcome of the lock.
  AcquireResult acquire(const std::string& name, milliseconds ttl, milliseconds wait) override;
  ChangeResult release(const std::string& name, const Lease& lease) override;
  ChangeResult extend(const std::string& name, Lease& lease, milliseconds ttl) override;

  bool reentrant() const override { return info_.reentrant; }
  // For a library that renews in the background: asks it whether it still
  // believes the lock's current lease held (op "held"); false otherwise.
  bool renewal_failed(const std::string& name) override;
  std::vector<std::string> steps() const override { return info_.steps; }
  // An adapter that said hello with "renewals": each goes to
  // LockContext::renewal_learnt.
  bool reports_renewals() const override { return info_.renewals; }
  // Asks an adapter that reports incidents (or renewals) for those it has
  // not reported yet.
  void finish() override;

  const AdapterInfo& info() const { return info_; }
  pid_t pid() const { return adapter_->pid(); }

 private:
  struct PauseRelay;

  // Sends `request`, waiting at the client's gate before and after (a paused
  // client neither sends nor acts on a reply).
  // Every response passes here: incidents and renewals it carries are reported.
  nlohmann::json call(const nlohmann::json& request);
  void report_incidents(const nlohmann::json& response);
  // Every renewal a response carries goes to context_.renewal_learnt.
  void report_renewals(const nlohmann::json& response);
  // With a pool: resets the adapter and hands it to the pool when it may
  // serve again; false when it may not (it is then stopped).
  bool reset_for_the_pool();
  // With a pool: copies what the adapter logged since this client took it
  // to the client's own log, where an adapter of its own would have logged.
  void copy_log() noexcept;

  AdapterConfig config_;
  LockContext context_;
  std::unique_ptr<AdapterProcess> adapter_;
  std::shared_ptr<PauseRelay> relay_;
  AdapterInfo info_;
  // When hello was answered: the adapter dates its incidents from then.
  std::chrono::steady_clock::time_point hello_at_;
  std::map<std::string, std::string> held_;  // lock -> the owner of the lease this client holds
  bool finished_ = false;                    // finish() answered: the client ended normally
  // With a pool: the client's own log, and the size of the pool's adapter's
  // log when this client took it.
  std::filesystem::path run_log_;
  std::uintmax_t log_from_ = 0;
};

// The factory the runner uses for `--adapter COMMAND`.
std::unique_ptr<Lock> make_adapter_lock(const AdapterConfig& config, const LockContext& context);

}  // namespace locklab
