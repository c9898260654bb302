// setnx-getset and setnx-getset-safe-unlock: the classic recipe of the Redis
// SETNX documentation ("Design pattern: Locking with SETNX", since marked
// deprecated), with millisecond timestamps:
//
//   1. SETNX key <now + ttl + 1>          1 = acquired; the value is our deadline
//   2. else GET key; if that deadline has passed by OUR clock:
//   3.   GETSET key <now + ttl + 1>; we win only if the old value it returns
//        is still expired (otherwise a faster client took over first)
//   4. unlock: DEL key
//
// The key carries no TTL in Redis: expiry exists only in the clients' heads.
// The "safe unlock" variant follows the recipe's advice to check, before the
// DEL, that our own deadline has not passed.
//
// Known weaknesses (docs/FAILURE-STORIES.md, stories 1-3):
//   - expiry is judged by each client's clock: a client whose clock runs ahead
//     takes over a live lock;
//   - the loser of a racing takeover has already overwritten the winner's
//     deadline with its own (harmless for exclusion, but the winner's value is
//     gone: its extend is refused);
//   - plain DEL deletes whoever holds the key, so a holder that outlived its
//     deadline frees the lock of the client that took it over. The safe
//     variant narrows this to the time between its check and its DEL.
//
// Timeouts and retries: the recipe says only to try again later. A held lock
// is tried again every 5-25 ms (random), at once when the key vanished
// between SETNX and GET; each command waits the connection's 1 s command
// timeout, and a lost reply to SETNX or GETSET ends the acquire as Unknown
// (a lost GET reply as Refused: nothing of ours was written). The short poll
// makes racing takeovers of an expired lock (docs/FAILURE-STORIES.md, story 2) frequent
// enough to show in a short run; any poll rate leaves them possible.
//
// Steps:
//   "after-get"            a GET showed an expired deadline, before the GETSET
//   "after-deadline-check" safe unlock only: the deadline has not passed, before the DEL
#include "setnx_getset.h"

#include <charconv>

#include "redis_lock_util.h"

namespace locklab {
namespace {

// A stored deadline, or nullopt when the value is not one of ours (then the
// recipe has nothing to compare, and we treat the lock as held).
std::optional<int64_t> parse_deadline(const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool expired(const Reply& stored, int64_t now_ms) {
  if (stored.type != Reply::Type::String) return false;
  auto deadline = parse_deadline(stored.str);
  return deadline && *deadline < now_ms;
}

class SetnxGetset final : public Lock {
 public:
  SetnxGetset(const LockContext& context, bool safe_unlock)
      : context_(context),
        redis_(context.connect(0)),
        rng_(context.seed),
        safe_unlock_(safe_unlock) {}

  std::vector<std::string> steps() const override { return setnx_getset_steps(safe_unlock_); }

  AcquireResult acquire(const std::string& name, milliseconds ttl, milliseconds wait) override {
    Clock& clock = *context_.clock;
    const int64_t deadline = clock.now_ns() + nanoseconds_of(wait);
    for (;;) {
      const int64_t started = clock.now_ns();
      std::string ours = deadline_value(started / 1'000'000, ttl);
      Reply stored;
      try {
        if (redis_->command({"SETNX", name, ours}).integer == 1) return held(ours, ttl, started);
      } catch (const RedisError& e) {
        return unknown_or_refused(e);
      }
      try {
        stored = redis_->command({"GET", name});
      } catch (const RedisError& e) {
        // SETNX said 0, so nothing of ours is there.
        return {Outcome::Refused, std::nullopt, e.what()};
      }
      const int64_t now_ms = clock.now_ms();
      if (expired(stored, now_ms)) {
        context_.step("after-get");
        ours = deadline_value(now_ms, ttl);
        Reply old;
        try {
          old = redis_->command({"GETSET", name, ours});
        } catch (const RedisError& e) {
          return unknown_or_refused(e);
        }
        // A nil old value means the key vanished meanwhile: GETSET created it for us.
        if (old.is_nil() || expired(old, now_ms)) return held(ours, ttl, started);
        // Another client's GETSET came first; ours has overwritten its deadline.
      }
      if (clock.now_ns() >= deadline)
        return {Outcome::Refused, std::nullopt, "held by another client"};
      // A key that vanished between SETNX and GET is worth an immediate retry.
      if (!stored.is_nil()) clock.sleep_for(retry_delay(rng_));
    }
  }

  ChangeResult release(const std::string& name, const Lease& lease) override {
    if (safe_unlock_) {
      auto ours = parse_deadline(lease.owner);
      if (!ours || context_.clock->now_ms() >= *ours)
        return {Outcome::Refused, "our deadline has passed: not deleting", std::nullopt};
      context_.step("after-deadline-check");
    }
    return delete_whatever_is_there(*redis_, name);
  }

  // As the recipe would: GET to check the value is still ours, then GETSET a
  // new deadline. Between the two another client may take over; the GETSET
  // then overwrites its deadline, and we report Refused.
  ChangeResult extend(const std::string& name, Lease& lease, milliseconds ttl) override {
    const int64_t now = context_.clock->now_ns();
    const std::string ours = deadline_value(now / 1'000'000, ttl);
    try {
      Reply current = redis_->command({"GET", name});
      if (current.type != Reply::Type::String || current.str != lease.owner)
        return {Outcome::Refused, "not-owner", std::nullopt};
      Reply old = redis_->command({"GETSET", name, ours});
      if (old.type != Reply::Type::String || old.str != lease.owner)
        return {Outcome::Refused,
                "not-owner: taken over between GET and GETSET (its deadline overwritten)",
                std::nullopt};
    } catch (const RedisError& e) {
      return change_unknown_or_refused(e);
    }
    lease.owner = ours;
    lease.validity = ttl;
    lease.acquired_at_ns = now;
    return {Outcome::Done, "", std::nullopt};
  }

 private:
  static std::string deadline_value(int64_t now_ms, milliseconds ttl) {
    return std::to_string(now_ms + ttl.count() + 1);
  }

  static AcquireResult held(const std::string& ours, milliseconds ttl, int64_t started) {
    return {Outcome::Done, Lease{.owner = ours, .validity = ttl, .acquired_at_ns = started}, ""};
  }

  LockContext context_;
  std::unique_ptr<Connection> redis_;
  std::mt19937_64 rng_;
  bool safe_unlock_;
};

}  // namespace

const std::vector<std::string>& setnx_getset_steps(bool safe_unlock) {
  static const std::vector<std::string> plain = {"after-get"};
  static const std::vector<std::string> safe = {"after-get", "after-deadline-check"};
  return safe_unlock ? safe : plain;
}

std::unique_ptr<Lock> make_setnx_getset(const LockContext& context) {
  return std::make_unique<SetnxGetset>(context, false);
}

std::unique_ptr<Lock> make_setnx_getset_safe_unlock(const LockContext& context) {
  return std::make_unique<SetnxGetset>(context, true);
}

}  // namespace locklab
