// setnx-getset-lua: the SETNX/GET/GETSET recipe (see setnx_getset.cpp) moved
// into one Lua script, as PHP lock libraries publish it: the client passes its
// own "now" and deadline in, the script runs SETNX, GET, GETSET and sets an
// expiry on the key (PEXPIRE: the millisecond form of the EXPIRE they use,
// since our deadlines are in milliseconds). Unlock is a plain DEL.
//
// Known weaknesses: the script is atomic, so racing takeovers are gone, but
// expiry is still judged by the client's clock (a client whose clock runs
// ahead takes over a live lock), and the plain DEL still frees whoever holds
// the key (docs/FAILURE-STORIES.md, stories 2 and 3). The server-side expiry only means a
// crashed client's key disappears by itself.
//
// Timeouts and retries: as setnx-getset's (a held lock tried again every
// 5-25 ms, the connection's 1 s command timeout, a lost reply ends the
// acquire as Unknown); the PHP libraries this follows poll in a sleep loop
// of their own choosing, and no poll rate changes what the script allows.
//
// Steps: none; acquire is a single script.
#include "setnx_getset_lua.h"

#include "compare_and_replace_text.h"
#include "redis_lock_util.h"
#include "setnx_getset_acquire_text.h"

namespace locklab {
namespace {

class SetnxGetsetLua final : public Lock {
 public:
  explicit SetnxGetsetLua(const LockContext& context)
      : context_(context), redis_(context.connect(0)), rng_(context.seed) {}

  AcquireResult acquire(const std::string& name, milliseconds ttl, milliseconds wait) override {
    Clock& clock = *context_.clock;
    const int64_t deadline = clock.now_ns() + nanoseconds_of(wait);
    for (;;) {
      const int64_t started = clock.now_ns();
      const int64_t now_ms = started / 1'000'000;
      const std::string ours = std::to_string(now_ms + ttl.count() + 1);
      Reply reply;
      try {
        reply = eval_script(*redis_, scripts::setnx_getset_acquire, {name},
                            {std::to_string(now_ms), ours, std::to_string(ttl.count())});
      } catch (const RedisError& e) {
        return unknown_or_refused(e);
      }
      if (reply.is_error()) return {Outcome::Refused, std::nullopt, reply.str};
      if (reply.type == Reply::Type::String)
        return {Outcome::Done, Lease{.owner = ours, .validity = ttl, .acquired_at_ns = started},
                ""};
      if (clock.now_ns() >= deadline)
        return {Outcome::Refused, std::nullopt, "held by another client"};
      clock.sleep_for(retry_delay(rng_));
    }
  }

  // The recipe's unlock: DEL, whoever holds the key now.
  ChangeResult release(const std::string& name, const Lease&) override {
    return delete_whatever_is_there(*redis_, name);
  }

  // A new deadline and expiry, stored only if the key still holds ours.
  ChangeResult extend(const std::string& name, Lease& lease, milliseconds ttl) override {
    const int64_t now = context_.clock->now_ns();
    const std::string ours = std::to_string(now / 1'000'000 + ttl.count() + 1);
    ChangeResult result = run_owner_script(*redis_, scripts::compare_and_replace, {name},
                                           {lease.owner, ours, std::to_string(ttl.count())});
    if (result.outcome == Outcome::Done) {
      lease.owner = ours;
      lease.validity = ttl;
      lease.acquired_at_ns = now;
    }
    return result;
  }

 private:
  LockContext context_;
  std::unique_ptr<Connection> redis_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<Lock> make_setnx_getset_lua(const LockContext& context) {
  return std::make_unique<SetnxGetsetLua>(context);
}

}  // namespace locklab
