// set-nx-px: the single-instance lock of the Redis documentation
// ("Distributed Locks with Redis", section "Correct Implementation with a
// Single Instance"): SET key <random> NX PX ttl to acquire; a Lua script that
// deletes the key only if it still holds our random value to release.
//
// Known weakness: the lease is a timeout. A client paused (GC, SIGSTOP) past
// the TTL still believes it holds the lock while another client holds it; and
// an asynchronous replica promoted before it received the key grants it again.
//
// Timeouts and retries: the documentation names none. Each command waits
// the connection's command timeout (1 s in the runner, the order of Jedis'
// 2 s and Redisson's 3 s defaults; redis-py waits forever by default), and a
// lost reply ends the acquire as Unknown. A held lock is tried again every
// 5-25 ms (random); redis-py's Lock, the best-known client of this recipe,
// polls every 100 ms. The faster poll makes waiters race more often in a
// short run; it adds no interleaving a slower poll could not produce.
//
// The attempt (SingleKeyLock::set_nx_px), the retry loop, release and extend
// are SingleKeyLock's (single_key_lock.h).
#include "set_nx_px.h"

#include "single_key_lock.h"

namespace locklab {
namespace {

class SetNxPx final : public SingleKeyLock {
 public:
  explicit SetNxPx(const LockContext& context) : SingleKeyLock(context) {}

 private:
  Attempt attempt(const std::string& name, const std::string& owner, milliseconds ttl,
                  int64_t started_ns) override {
    return set_nx_px(name, owner, ttl, started_ns);
  }
};

}  // namespace

std::unique_ptr<Lock> make_set_nx_px(const LockContext& context) {
  return std::make_unique<SetNxPx>(context);
}

}  // namespace locklab
