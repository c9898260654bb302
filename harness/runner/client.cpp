#include "client.h"

#include <thread>

#include "gated_connection.h"

namespace locklab {

using history::Event;
using history::Type;
using nlohmann::json;

namespace {

// Counts the commands a client sends (its watchdog's included): what the
// client asked of Redis, as opposed to what Redis counts (a script's own
// calls too).
class CountedConnection final : public Connection {
 public:
  CountedConnection(std::unique_ptr<Connection> inner, std::atomic<int64_t>& count)
      : inner_(std::move(inner)), count_(count) {}
  void send(const std::vector<std::string>& argv) override {
    count_.fetch_add(1, std::memory_order_relaxed);
    inner_->send(argv);
  }
  Reply receive() override { return inner_->receive(); }
  Reply receive_within(std::chrono::milliseconds timeout) override {
    return inner_->receive_within(timeout);
  }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::unique_ptr<Connection> inner_;
  std::atomic<int64_t>& count_;
};

}  // namespace

Client::Client(std::string id, uint64_t seed, history::ProcessLog& log,
               history::ProcessLog& late_log,
               std::function<std::unique_ptr<Lock>(LockContext)> make_lock,
               LockContext base_context, StepListener listener)
    : id_(std::move(id)),
      clock_(&gate_),
      log_(log),
      late_log_(late_log),
      rng_(seed),
      listener_(std::move(listener)) {
  LockContext context = std::move(base_context);
  context.client_id = id_;
  context.clock = &clock_;
  context.gate = &gate_;
  context.seed = seed;
  context.step = [this](std::string_view name) { lock_step(name); };
  context.renewed = [this](const std::string& lock, milliseconds ttl, int64_t sent_ns,
                           Outcome outcome) { renewed(lock, ttl, sent_ns, outcome); };
  context.renewal_learnt = [this](const std::string& lock, const std::string& owner,
                                  milliseconds ttl, int64_t sent_ns, int64_t answered_ns,
                                  Outcome outcome) {
    renewal_learnt(lock, owner, ttl, sent_ns, answered_ns, outcome);
  };
  context.incident = [this](IncidentKind kind, const std::string& message,
                            std::chrono::nanoseconds ago) { incident(kind, message, ago); };
  // Every connection of the client passes its gate: a pause stops them all.
  context.connect = [this, connect = std::move(context.connect)](size_t node) {
    return std::unique_ptr<Connection>(std::make_unique<CountedConnection>(
        std::make_unique<GatedConnection>(connect(node), gate_), commands_sent_));
  };
  lock_ = make_lock(std::move(context));
  for (auto& name : lock_->steps()) lock_steps_.insert(std::move(name));
}

void Client::lock_step(std::string_view name) {
  if (!lock_steps_.count(name))
    throw std::logic_error("the lock called step \"" + std::string(name) +
                           "\", which it does not declare in Lock::steps()");
  step(name);
}

void Client::append(Event e) {
  // The lock's watchdog may record from a thread of its own.
  std::lock_guard lock(log_mu_);
  log_.append(std::move(e));
}

std::optional<int64_t> Client::history_time_of(int64_t reading) {
  std::optional<int64_t> real = clock_.real_time_of(reading);
  if (!real) return std::nullopt;
  return *real - log_.origin_ns();
}

void Client::renewed(const std::string& lock, milliseconds ttl, int64_t sent_ns, Outcome outcome) {
  Event e = event(outcome == Outcome::Done      ? Type::Ok
                  : outcome == Outcome::Refused ? Type::Fail
                                                : Type::Info,
                  "renewed", lock);
  e.value["ttl_ms"] = ttl.count();
  if (auto sent = history_time_of(sent_ns)) e.value["sent_ns"] = *sent;
  append(std::move(e));
}

void Client::renewal_learnt(const std::string& lock, const std::string& owner, milliseconds ttl,
                            int64_t sent_ns, int64_t answered_ns, Outcome outcome) {
  Event e = event(outcome == Outcome::Done      ? Type::Ok
                  : outcome == Outcome::Refused ? Type::Fail
                                                : Type::Info,
                  "renewed", lock);
  e.owner = owner;
  e.value["ttl_ms"] = ttl.count();
  // What the client's clock read when the renewal happened is not known.
  e.client_time_ns.reset();
  std::lock_guard guard(log_mu_);
  int64_t at = answered_ns;
  if (auto latest = latest_hold_.find(lock); latest != latest_hold_.end()) {
    if (latest->second.owner == owner) {
      at = std::max(at, latest->second.acquired_at);
    } else if (answered_ns >= latest->second.acquired_at) {
      // An earlier hold's, answered once a later one had begun: placed by
      // its time it would seem to renew the later lease, and it renews no
      // lease the history still holds open.
      return;
    }
  }
  e.value["sent_ns"] = std::max(log_.origin_ns(), std::min(sent_ns, at)) - log_.origin_ns();
  late_log_.append_at(std::move(e), at);
}

void Client::incident(IncidentKind kind, const std::string& message, std::chrono::nanoseconds ago) {
  const int64_t at_ns = std::max<int64_t>(0, monotonic_ns() - ago.count() - log_.origin_ns());
  Event e;
  e.type = Type::Info;
  e.f = "incident";
  e.client_time_ns = clock_.now_ns();
  e.error = message;
  e.value["kind"] = incident_name(kind);
  e.value["at_ns"] = at_ns;
  std::lock_guard lock(log_mu_);
  log_.append(std::move(e));
  incidents_.push_back({id_, kind, message, double(at_ns) / 1e6});
}

std::vector<Incident> Client::incidents() const {
  std::lock_guard lock(log_mu_);
  return incidents_;
}

Event Client::event(Type type, std::string f, const std::string& lock) {
  Event e;
  e.type = type;
  e.f = std::move(f);
  e.lock = lock;
  e.client_time_ns = clock_.now_ns();
  return e;
}

void Client::run(const Workload& workload, ProtectedResource& resource, int64_t deadline_ns,
                 const std::atomic<bool>& stop) {
  try {
    int64_t holds = 0;
    for (int64_t op = 0; op < workload.ops_per_client; ++op) {
      if (stop || monotonic_ns() >= deadline_ns) break;
      if (workload.holds_per_client > 0 && holds >= workload.holds_per_client) break;
      const std::string& lock = workload.locks[rng_() % workload.locks.size()];
      holds += one_operation(workload, resource, lock);
      if (workload.think_ms > 0)
        clock_.sleep_for(std::chrono::milliseconds(rng_() % (workload.think_ms + 1)));
    }
    lock_->finish();
  } catch (const ClientCrashed&) {
    stats_.crashed = true;
  } catch (const std::exception& e) {
    error_ = id_ + ": " + e.what();
  }
  // A crashed client's lock dies with it: its watchdog stops, nothing is released.
  lock_.reset();
}

bool Client::one_operation(const Workload& workload, ProtectedResource& resource,
                           const std::string& lock) {
  std::optional<Lease> outer = acquire(workload, lock, "before-acquire", "acquired");
  if (!outer) return false;
  const Lease lease = std::move(*outer);

  // A re-entrant lock is taken again by the holder (a helper that locks what
  // its caller holds) and given back before the critical section.
  std::vector<Lease> inner;
  const int64_t levels = lock_->reentrant() ? workload.reentry : 1;
  for (int64_t level = 2; level <= levels; ++level) {
    std::optional<Lease> again = acquire(workload, lock, "before-reacquire", "reacquired");
    if (!again) break;
    inner.push_back(*again);
  }
  for (auto it = inner.rbegin(); it != inner.rend(); ++it)
    release(lock, *it, "before-inner-release", "inner-released");

  // The critical section: read-modify-write of the protected counter.
  const int64_t read = resource.read(lock);
  clock_.sleep_for(std::chrono::milliseconds(workload.work_ms));
  // The client acts only while it believes the lease valid, by its own clock
  // (unless the story's workload trusts whatever the library handed it).
  bool expired = workload.checks_validity && lease.validity &&
                 clock_.now_ns() >= lease.acquired_at_ns + lease.validity->count() * 1'000'000;
  bool renewal_failed = workload.stop_on_renewal_failure && lock_->renewal_failed(lock);
  if (expired || renewal_failed) {
    Event e = event(Type::Info, "lost", lock);
    e.owner = lease.owner;
    e.error = expired ? "lease validity ran out before the write" : "the watchdog's renewal failed";
    append(std::move(e));
    ++stats_.lost;
  } else {
    step("before-write");
    json value;  // built by key: cheaper than from an initializer list, on every operation
    value["read"] = read;
    value["write"] = read + 1;
    Event w = event(Type::Invoke, "write", lock);
    w.token = lease.token;
    w.value = value;
    append(std::move(w));
    auto result = resource.write(lock, read + 1, lease.token);
    Event done = event(result.accepted ? Type::Ok : Type::Fail, "write", lock);
    done.token = lease.token;
    done.value = std::move(value);
    if (!result.accepted) done.error = result.reason;
    append(std::move(done));
    ++(result.accepted ? stats_.writes_accepted : stats_.writes_rejected);
    step("after-write");
  }
  // A careful caller tries once more when it cannot tell whether its release
  // happened (no steps: the story's faults are about the first try).
  if (release(lock, lease, "before-release", "released") == Type::Info &&
      workload.retry_unknown_release)
    release(lock, lease, "", "");
  return true;
}

std::optional<Lease> Client::acquire(const Workload& workload, const std::string& lock,
                                     std::string_view before, std::string_view after) {
  const auto ttl = std::chrono::milliseconds(workload.ttl_ms);
  Event invoke = event(Type::Invoke, "acquire", lock);
  invoke.value["ttl_ms"] = workload.ttl_ms;
  invoke.value["wait_ms"] = workload.wait_ms;
  append(std::move(invoke));
  step(before);
  AcquireResult acquired = lock_->acquire(lock, ttl, std::chrono::milliseconds(workload.wait_ms));
  if (acquired.outcome != Outcome::Done) {
    bool unknown = acquired.outcome == Outcome::Unknown;
    Event e = event(unknown ? Type::Info : Type::Fail, "acquire", lock);
    e.error = acquired.error;
    append(std::move(e));
    ++(unknown ? stats_.acquires_unknown : stats_.acquires_failed);
    return std::nullopt;
  }
  Lease& lease = *acquired.lease;
  Event e = event(Type::Ok, "acquire", lock);
  e.owner = lease.owner;
  e.token = lease.token;
  if (lease.validity) e.value["validity_ms"] = lease.validity->count();
  e.value["reentry"] = lease.reentry;
  // When the attempt that won began, in the history's time: the grant came no earlier.
  if (lease.attempt_sent_ns)
    e.value["attempt_ns"] = std::max<int64_t>(0, *lease.attempt_sent_ns - log_.origin_ns());
  else if (auto attempt = history_time_of(lease.acquired_at_ns))
    e.value["attempt_ns"] = *attempt;
  // No deadline of its own: the lock renews the lease in the background.
  if (!lease.validity) {
    e.value["renews"] = true;
    if (lock_->reports_renewals()) e.value["renewals_recorded"] = true;
  }
  append(std::move(e));
  {
    std::lock_guard guard(log_mu_);
    latest_hold_[lock] = {lease.owner, monotonic_ns()};
  }
  ++stats_.acquires_ok;
  step(after);
  return std::move(lease);
}

Type Client::release(const std::string& lock, const Lease& lease, std::string_view before,
                     std::string_view after) {
  if (!before.empty()) step(before);
  Event invoke = event(Type::Invoke, "release", lock);
  invoke.owner = lease.owner;
  append(std::move(invoke));
  ChangeResult released = lock_->release(lock, lease);
  Type type = released.outcome == Outcome::Done      ? Type::Ok
              : released.outcome == Outcome::Refused ? Type::Fail
                                                     : Type::Info;
  Event e = event(type, "release", lock);
  e.owner = lease.owner;
  json value = json::object();
  if (type == Type::Ok) value["result"] = "released";
  if (type == Type::Fail) value["result"] = "not-owner";
  if (released.deleted) value["deleted"] = *released.deleted;
  if (type == Type::Ok && released.remaining) value["remaining"] = *released.remaining;
  if (!value.empty()) e.value = std::move(value);
  if (type != Type::Ok && !released.error.empty()) e.error = released.error;
  append(std::move(e));
  ++(type == Type::Ok     ? stats_.releases_ok
     : type == Type::Fail ? stats_.releases_refused
                          : stats_.releases_unknown);
  if (!after.empty()) step(after);
  return type;
}

}  // namespace locklab
