// setnx-expire: the naive two-step lock found in countless blog posts and
// early libraries: `SETNX key <random>`, then a separate `EXPIRE key <ttl>`
// (seconds, rounded up). Release and extend compare our random value first
// (Lua compare-and-delete / compare-and-pexpire), as set-nx-px does.
//
// Known weakness (docs/FAILURE-STORIES.md, story 4): the two commands are not atomic. A
// client that crashes (or loses its connection) between them leaves a key
// with no expiry: the lock is held forever and every other client waits in
// vain. SET key value NX PX ttl made this pattern unnecessary in Redis 2.6.12.
//
// Timeouts and retries: the blog-post recipe names none; those of set-nx-px
// (the connection's 1 s command timeout, a held lock tried again every 5-25
// ms). A lost SETNX reply ends the acquire as Unknown; so does a lost EXPIRE
// reply, and it is not retried: the key may then have no expiry, which is
// the recipe's weakness, not the lab's.
//
// Steps:
//   "after-setnx"  SETNX succeeded, EXPIRE not yet sent
// Below: one acquire attempt; the retry loop, release and extend are
// SingleKeyLock's (single_key_lock.h).
#include "setnx_expire.h"

#include "redis_lock_util.h"
#include "single_key_lock.h"

namespace locklab {
namespace {

class SetnxExpire final : public SingleKeyLock {
 public:
  explicit SetnxExpire(const LockContext& context) : SingleKeyLock(context) {}

  std::vector<std::string> steps() const override { return setnx_expire_steps(); }

 private:
  Attempt attempt(const std::string& name, const std::string& owner, milliseconds ttl,
                  int64_t started_ns) override {
    Reply reply;
    try {
      reply = redis_->command({"SETNX", name, owner});
    } catch (const RedisError& e) {
      return {unknown_or_refused(e)};
    }
    if (reply.is_error()) return {AcquireResult{Outcome::Refused, std::nullopt, reply.str}};
    if (reply.integer != 1) return {};
    context_.step("after-setnx");
    std::string failure;
    try {
      Reply expire = redis_->command({"EXPIRE", name, std::to_string((ttl.count() + 999) / 1000)});
      if (expire.is_error()) failure = expire.str;
    } catch (const RedisError& e) {
      failure = e.what();
    }
    // The key is ours and may have no expiry: neither held nor free.
    if (!failure.empty())
      return {AcquireResult{Outcome::Unknown, std::nullopt, "EXPIRE after SETNX: " + failure}};
    return acquired(owner, ttl, started_ns);
  }
};

}  // namespace

const std::vector<std::string>& setnx_expire_steps() {
  static const std::vector<std::string> steps = {"after-setnx"};
  return steps;
}

std::unique_ptr<Lock> make_setnx_expire(const LockContext& context) {
  return std::make_unique<SetnxExpire>(context);
}

}  // namespace locklab
