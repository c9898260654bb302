-- Acquire (redisson-hash), after Redisson's RedissonLock.tryLockInnerAsync:
-- the lock is a hash whose field <client id>:<thread> counts re-entries.
-- KEYS[1] = lock key; ARGV[1] = lease time in ms, ARGV[2] = our field.
-- Redisson returns nil when acquired and the PTTL otherwise; we return
-- {1, depth} when acquired (so the lab can record the nesting depth) and
-- {0, pttl} when another owner holds it.
if (redis.call("EXISTS", KEYS[1]) == 0) or (redis.call("HEXISTS", KEYS[1], ARGV[2]) == 1) then
  local depth = redis.call("HINCRBY", KEYS[1], ARGV[2], 1)
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
  return {1, depth}
end
return {0, redis.call("PTTL", KEYS[1])}
