-- Release one level (redisson-hash), after RedissonLock.unlockInnerAsync.
-- KEYS[1] = lock key, KEYS[2] = unlock channel; ARGV[1] = unlock message,
-- ARGV[2] = lease time in ms, ARGV[3] = our field.
-- Returns nil when we do not hold it, else the depth left: > 0 when still
-- held one level less (lease renewed), 0 when fully released (key deleted,
-- waiters told). Redisson returns 0 and 1 for these; the lab records the
-- depth so the re-entrancy checker can compare it with the nesting.
if redis.call("HEXISTS", KEYS[1], ARGV[3]) == 0 then
  return nil
end
local depth = redis.call("HINCRBY", KEYS[1], ARGV[3], -1)
if depth > 0 then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return depth
end
redis.call("DEL", KEYS[1])
redis.call("PUBLISH", KEYS[2], ARGV[1])
return 0
