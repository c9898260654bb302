// Lease bounds (checkers.h, "overlap classes"): each rule below moves `lo`
// only on what surely happened and `hi` on what may have, so that a broken
// lease (judged against lo) and an overrun (judged against hi) are both proved.
#include "leases.h"

namespace locklab::checkers {

using history::Type;

namespace {

constexpr int64_t kNsPerMs = 1'000'000;

// Moves the end of `lease` to `end` (and by the holder's clock to
// `client_end`) when later: an extension that surely happened.
void extend_surely(LeaseBounds& lease, int64_t end, std::optional<int64_t> client_end) {
  lease.lo = std::max(lease.lo, end);
  lease.hi = std::max(lease.hi, end);
  if (client_end && lease.client_end) lease.client_end = std::max(*lease.client_end, *client_end);
}

}  // namespace

Holder& Leases::holder(LockId lock, ProcessId process) {
  if (holders_.size() <= size_t(lock)) holders_.resize(size_t(lock) + 1);
  auto& row = holders_[size_t(lock)];
  if (row.size() <= size_t(process)) row.resize(size_t(process) + 1);
  return row[size_t(process)];
}

void Leases::on_step(const Step& step) {
  if (in_flight_.size() <= size_t(step.process)) in_flight_.resize(size_t(step.process) + 1);
  InFlight& invoke = in_flight_[size_t(step.process)];
  if (step.type == Type::Invoke && (step.op == Op::Acquire || step.op == Op::Extend))
    invoke = InFlight{step.event.ttl_ms, step.event.client_time_ns};
  if (step.lock == kNoLock) return;
  Holder& h = holder(step.lock, step.process);
  switch (step.op) {
    case Op::Acquire:
      if (step.type == Type::Ok) acquired(step, h, invoke);
      return;
    case Op::Extend:
      extended(step, h, invoke);
      return;
    case Op::Renewed:
      renewed(step, h);
      return;
    case Op::Write:
      wrote(step, h);
      return;
    case Op::Release:
    case Op::Lost:
      if (h.open && (step.op == Op::Lost || step.type == Type::Invoke)) {
        h.acts.last_act = step.ref;
        h.acts.last_act_client = step.event.client_time_ns;
      }
      return;
    case Op::Incident:
    case Op::Other:
      return;
  }
}

void Leases::acquired(const Step& step, Holder& h, const InFlight& invoke) {
  // The grant happened between the start of the attempt that won and the ok.
  Ref from = step.invoke ? step.invoke : step.ref;
  if (step.event.attempt_ns)
    from.time_ns = std::clamp(*step.event.attempt_ns, from.time_ns, step.ref.time_ns);
  LeaseBounds lease;
  const auto& validity = step.event.validity_ms;
  if (invoke.ttl_ms || validity) {
    lease.known = true;
    lease.source = validity ? "validity" : "ttl";
    lease.length_ns =
        std::min(invoke.ttl_ms.value_or(*validity), validity.value_or(*invoke.ttl_ms)) * kNsPerMs;
    lease.lo = lease.hi = from.time_ns + lease.length_ns;
    if (invoke.client_ns) lease.client_end = *invoke.client_ns + lease.length_ns;
  }
  lease.unbounded = step.event.renews && !step.event.renewals_recorded;
  // A lock that renews in the background gives its holder no deadline to judge by its clock.
  if (step.event.renews) lease.client_end.reset();
  if (h.open) {
    // A re-entrant acquire renews the lease it nests in.
    if (lease.known && h.lease.known) extend_surely(h.lease, lease.lo, lease.client_end);
    h.lease.unbounded = h.lease.unbounded || lease.unbounded;
    return;
  }
  h.lease = lease;
  h.acts = {};
  h.grant_from = from;
  h.acquire_ok = step.ref;
}

void Leases::extended(const Step& step, Holder& h, const InFlight& invoke) {
  if (!h.open) return;
  if (!invoke.ttl_ms) {
    // An extend of unknown length leaves no upper bound once it may have happened.
    if (step.type == Type::Ok || step.type == Type::Info) h.lease.unbounded = true;
    return;
  }
  const int64_t from = step.type == Type::Invoke ? step.ref.time_ns : step.invoke.time_ns;
  const int64_t end = from + *invoke.ttl_ms * kNsPerMs;
  switch (step.type) {
    case Type::Invoke:
      h.lease.in_flight_end = end;
      return;
    case Type::Ok:
      extend_surely(h.lease, end,
                    invoke.client_ns ? std::optional(*invoke.client_ns + *invoke.ttl_ms * kNsPerMs)
                                     : std::nullopt);
      break;
    case Type::Info:
      h.lease.hi = std::max(h.lease.hi, end);
      break;
    case Type::Fail:
      break;
  }
  h.lease.in_flight_end = kNever;
}

void Leases::renewed(const Step& step, Holder& h) {
  if (!h.open || step.type == Type::Fail) return;
  const auto& ttl = step.event.ttl_ms;
  if (!ttl) {
    h.lease.unbounded = true;
    return;
  }
  // Redis applied it between its sending and its record: the lease surely
  // lasts from sent_ns (when known) and may last from the record's time.
  const int64_t length = *ttl * kNsPerMs;
  h.lease.hi = std::max(h.lease.hi, step.ref.time_ns + length);
  if (step.type == Type::Ok && step.event.sent_ns)
    h.lease.lo = std::max(h.lease.lo, std::min(*step.event.sent_ns, step.ref.time_ns) + length);
  // A watchdog's holder is given no deadline of its own to judge by its clock.
  h.lease.client_end.reset();
}

void Leases::wrote(const Step& step, Holder& h) {
  if (step.type == Type::Invoke) {
    h.acts.write_in_flight = h.open;
    if (!h.open) return;
    h.acts.last_act = step.ref;
    h.acts.last_act_client = step.event.client_time_ns;
    return;
  }
  if (!h.acts.write_in_flight) return;
  h.acts.write_in_flight = false;
  if (step.type == Type::Ok) ++h.acts.accepted;
  if (step.type == Type::Fail) ++h.acts.rejected;
}

}  // namespace locklab::checkers
