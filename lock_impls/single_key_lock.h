// What the single-key locks (set-nx-px, fenced, setnx-expire, wait-synced)
// share: one key holding the acquirer's random owner value; acquire tries
// until it decides or its wait is over; release deletes the key only while it
// still holds our value (compare_and_delete.lua); extend resets its TTL the
// same way (compare_and_pexpire.lua). Each algorithm writes only its attempt.
//
// Timeouts and retries (shared by all four): every command waits at most the
// connection's command timeout (1 s in the runner), and a lost reply is not
// sent again: it ends the acquire as Unknown (a retried SET NX would find our
// own key and fail). A lock held by someone else is tried again after
// retry_delay() (5-25 ms, random) until the wait runs out.
#pragma once

#include <memory>
#include <optional>
#include <random>
#include <string>

#include "lock.h"

namespace locklab {

class SingleKeyLock : public Lock {
 public:
  explicit SingleKeyLock(const LockContext& context);

  // Calls attempt() with a fresh owner value until it returns a result, or
  // `wait` has passed by the client's clock (then Refused with the last
  // attempt's reason), with a short random pause between attempts.
  AcquireResult acquire(const std::string& name, milliseconds ttl, milliseconds wait) final;
  ChangeResult release(const std::string& name, const Lease& lease) override;
  ChangeResult extend(const std::string& name, Lease& lease, milliseconds ttl) override;

 protected:
  // What one try came to: `result` when it decided (acquired, an error, an
  // unknown outcome), or nullopt when someone else holds the lock and
  // `why_not` says so.
  struct Attempt {
    std::optional<AcquireResult> result;
    std::string why_not = "held by another client";
  };

  // One try to take `name` for `ttl`, storing `owner`; `started_ns` is the
  // client clock when this try began (the lease counts from it).
  virtual Attempt attempt(const std::string& name, const std::string& owner, milliseconds ttl,
                          int64_t started_ns) = 0;

  // SET name owner NX PX ttl: the attempt of the Redis documentation's
  // single-instance lock (set-nx-px), which wait-synced starts with.
  Attempt set_nx_px(const std::string& name, const std::string& owner, milliseconds ttl,
                    int64_t started_ns);

  // The Done result of a try that took the lock.
  static Attempt acquired(const std::string& owner, milliseconds ttl, int64_t started_ns,
                          std::optional<int64_t> token = std::nullopt);

  LockContext context_;
  std::unique_ptr<Connection> redis_;  // the client thread's connection to node 0
  std::mt19937_64 rng_;
};

}  // namespace locklab
