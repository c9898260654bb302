// The one interface every lock algorithm implements. An implementation is
// written against the published description it follows, talks to Redis only
// through Connections and reads time only through a Clock, both handed to it
// in a LockContext (network timeouts aside: like a socket's, they run on the
// monotonic clock, whatever the client believes the time to be).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "clock.h"
#include "connection.h"
#include "envelope_axis.h"
#include "incident_kind.h"

namespace locklab {

using std::chrono::milliseconds;

// What a client holds after a successful acquire.
struct Lease {
  std::string owner;             // the unique value this acquisition stored in Redis
  std::optional<int64_t> token;  // fencing token, when the algorithm issues one
  // The client may act as holder until acquired_at_ns + validity (by its own
  // Clock); nullopt = no deadline of its own (a watchdog keeps the lease alive).
  std::optional<milliseconds> validity;
  int64_t acquired_at_ns = 0;  // client clock when acquire began
  int reentry = 1;             // nesting depth after this acquire (re-entrant locks)
  // monotonic_ns() when the attempt that won was sent, for a lock that
  // learns it from outside this process (an adapter's library retries on its
  // own); the grant came no earlier.
  std::optional<int64_t> attempt_sent_ns;
};

enum class Outcome {
  Done,     // acquired / released / extended
  Refused,  // definitely not: someone else holds it, or we no longer own it
  Unknown,  // a reply was lost (timeout, I/O error): it may or may not have happened
};

struct AcquireResult {
  Outcome outcome = Outcome::Refused;
  std::optional<Lease> lease;  // set iff outcome == Done
  std::string error;           // why, for Refused/Unknown
};

struct ChangeResult {
  Outcome outcome = Outcome::Refused;
  std::string error;
  std::optional<long long> deleted;  // keys an unconditional DEL removed (classic unlock)
  std::optional<int> remaining;      // nesting depth left after a release (re-entrant locks)
};

// Where a lock implementation gets everything from the outside world.
struct LockContext {
  std::string client_id;  // "c1": unique per client, part of owner values where the recipe says so
  // Opens a new connection to Redis node `i` (0-based) for the calling thread;
  // connections are not shared between threads.
  std::function<std::unique_ptr<Connection>(size_t node)> connect;
  size_t node_count = 1;
  // An address of node `i` for this client, valid for the whole run (it
  // passes the client's fault proxies and follows a failover): for a lock
  // that runs outside this process and connects by itself.
  std::function<Endpoint(size_t node)> endpoint;
  Clock* clock = nullptr;
  // The client's stop-the-world switch: connections and clock already pass
  // it; a lock that runs outside this process (an adapter) follows it too.
  PauseGate* gate = nullptr;
  // Called at named points inside an operation ("after-setnx", "after-send",
  // "after-validity-check"...); the harness may pause the client or crash it
  // (by throwing ClientCrashed) there, to reproduce published timelines.
  std::function<void(std::string_view step)> step = [](std::string_view) {};
  uint64_t seed = 1;  // for owner values and retry jitter: runs repeat by seed
  // The lease the story's clients will ask for (its workload's ttl_ms), known
  // before the story's clock starts, for a lock that builds something per
  // lease (a Redisson client per lockWatchdogTimeout) before it counts.
  std::optional<milliseconds> story_ttl;
  // Algorithm parameters from the scenario (e.g. "replicas" for wait-synced).
  std::function<std::optional<int64_t>(std::string_view name)> param = [](std::string_view) {
    return std::optional<int64_t>{};
  };
  // A lock that renews its leases in the background reports each renewal
  // here, so the history records it (a `renewed` event): `sent_ns` is this
  // client's Clock reading when the renewal was sent, `outcome` what became
  // of it. May be called from the lock's own background task.
  std::function<void(const std::string& name, milliseconds ttl, int64_t sent_ns, Outcome outcome)>
      renewed = [](const std::string&, milliseconds, int64_t, Outcome) {};
  // A lock whose renewals run outside this process (an adapter's library)
  // learns of each after the fact and reports it here, in the order they were
  // answered: of the lease of `owner`, sent at `sent_ns` and answered at
  // `answered_ns`, both monotonic_ns() readings. The history places it by
  // those times.
  std::function<void(const std::string& name, const std::string& owner, milliseconds ttl,
                     int64_t sent_ns, int64_t answered_ns, Outcome outcome)>
      renewal_learnt =
          [](const std::string&, const std::string&, milliseconds, int64_t, int64_t, Outcome) {};
  // A lock that runs a library reports here what the library left behind
  // that its caller never saw (an unhandled promise rejection, an exception
  // that ended one of its threads: vocabulary/incident_kind.h), `ago` before
  // the call. May be called from any thread.
  std::function<void(IncidentKind kind, const std::string& message, std::chrono::nanoseconds ago)>
      incident = [](IncidentKind, const std::string&, std::chrono::nanoseconds) {};
};

// Thrown through lock code at a step where the harness crashes the client:
// the client stops for good without releasing anything.
struct ClientCrashed {
  std::string step;
};

class Lock {
 public:
  virtual ~Lock() = default;

  // Tries to take lock `name` for `ttl`, retrying until `wait` has passed (by
  // the client's clock). Done: the lease is ours. Refused: it is not ours and
  // nothing of ours is left in Redis. Unknown: a reply was lost, so Redis may
  // hold our owner value; the caller must not assume either way.
  virtual AcquireResult acquire(const std::string& name, milliseconds ttl, milliseconds wait) = 0;

  // Gives up `lease` on `name`. Done: it was released (for re-entrant locks:
  // one level). Refused: it was no longer ours and nothing was changed.
  // Unknown: the reply was lost.
  virtual ChangeResult release(const std::string& name, const Lease& lease) = 0;

  // Pushes the expiry of our `lease` on `name` to `ttl` from now. Done: still
  // ours and extended. Refused: no longer ours, nothing changed. Unknown: lost reply.
  // On Done, `lease` is updated to match: its validity counts from this extend
  // (acquired_at_ns = when the extend began), and its owner is the new value
  // when the algorithm stores a new one (the timestamp locks).
  virtual ChangeResult extend(const std::string& name, Lease& lease, milliseconds ttl) = 0;

  // True if acquiring a lock this client already holds nests (the lock counts
  // the levels, and each release gives back one) instead of waiting for it.
  virtual bool reentrant() const { return false; }

  // True while a background renewal (watchdog) has failed since the last
  // acquire: the client may choose to stop working. Default: no watchdog.
  virtual bool renewal_failed(const std::string& /*name*/) { return false; }

  // True when its background renewals go to LockContext::renewed or
  // renewal_learnt, each one.
  virtual bool reports_renewals() const { return false; }

  // The client's run is over and it was not crashed: report anything still
  // to report (LockContext::incident) before the lock is destroyed.
  virtual void finish() {}

  // Every name this lock passes to LockContext::step inside its operations
  // (beside the client's own workload steps), so that scenarios can fire a
  // fault there and the lab can tell a step that is never reached from one
  // that does not exist. Calling step() with a name not listed is a bug.
  virtual std::vector<std::string> steps() const { return {}; }
};

// One line of `locklab list`.
struct AlgorithmInfo {
  std::string id;
  std::string description;
  // Its family in the order of the design's history, which comparisons
  // follow: "old recipe", "single instance", "Redisson-style", "Redlock",
  // "fenced", "replica-synced".
  std::string family;
  bool reentrant = false;
  bool fencing = false;
  bool multi_node = false;  // needs several independent masters (Redlock)
  bool needs_replica = false;
  std::vector<std::string> steps;  // what Lock::steps() returns for it
  // What its design predicts in the safety envelope's story (envelope_axis.h),
  // one entry per axis; stated in the algorithm's header.
  EnvelopePredictions envelope;
};

// Every built-in algorithm, in a stable order.
const std::vector<AlgorithmInfo>& algorithms();

// The built-in algorithm `id`, or nullptr when there is none.
const AlgorithmInfo* find_algorithm(std::string_view id);

// The built-in algorithm `id`. Throws std::invalid_argument, "unknown
// algorithm 'ID' (known: …)", when there is none.
const AlgorithmInfo& algorithm_info(std::string_view id);

// "setnx-getset, …, wait-synced": every id, for messages.
std::string algorithm_ids();

// Creates algorithm `id` for one client. Throws std::invalid_argument listing
// the known ids when `id` is unknown.
std::unique_ptr<Lock> make_lock(const std::string& id, const LockContext& context);

// 128 random bits as 32 hex digits: an owner value no other client will pick.
std::string random_owner(std::mt19937_64& rng);

}  // namespace locklab
