// fenced: set-nx-px plus a fencing token, as Kleppmann's "How to do
// distributed locking" (2016) asks of any lease lock: every acquisition gets a
// number from INCR on a per-lock counter (`<name>:fence`), in the same Lua
// script as the SET NX PX, so tokens strictly increase across holders. The
// protected resource remembers the highest token it has seen and rejects
// writes carrying a lower one.
//
// Known weakness: the lease itself is still a timeout, so a paused client
// still believes it holds the lock after it expired (docs/FAILURE-STORIES.md, story 5); the
// token only lets a resource that checks it reject the stale writes. A
// counter on an asynchronous replica can also go back after a failover.
//
// Timeouts and retries: Kleppmann's fencing asks for none of its own; those
// of set-nx-px (the connection's 1 s command timeout, a lost reply ends the
// acquire as Unknown, a held lock tried again every 5-25 ms), so the two
// differ only in the token.
//
// Steps: none; acquire is a single script.
// Below: one acquire attempt; the retry loop, release and extend are
// SingleKeyLock's (single_key_lock.h).
#include "fenced.h"

#include "fenced_acquire_text.h"
#include "redis_lock_util.h"
#include "single_key_lock.h"

namespace locklab {
namespace {

class Fenced final : public SingleKeyLock {
 public:
  explicit Fenced(const LockContext& context) : SingleKeyLock(context) {}

 private:
  Attempt attempt(const std::string& name, const std::string& owner, milliseconds ttl,
                  int64_t started_ns) override {
    Reply reply;
    try {
      reply = eval_script(*redis_, scripts::fenced_acquire, {name, name + ":fence"},
                          {owner, std::to_string(ttl.count())});
    } catch (const RedisError& e) {
      return {unknown_or_refused(e)};
    }
    if (reply.is_error()) return {AcquireResult{Outcome::Refused, std::nullopt, reply.str}};
    if (reply.type == Reply::Type::Integer) return acquired(owner, ttl, started_ns, reply.integer);
    return {};
  }
};

}  // namespace

std::unique_ptr<Lock> make_fenced(const LockContext& context) {
  return std::make_unique<Fenced>(context);
}

}  // namespace locklab
