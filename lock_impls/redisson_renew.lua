-- Renew the lease (redisson-hash watchdog and extend), after
-- RedissonBaseLock.renewExpirationAsync.
-- KEYS[1] = lock key; ARGV[1] = lease time in ms, ARGV[2] = our field.
-- Returns 1 if renewed, 0 if the lock no longer holds our field.
if redis.call("HEXISTS", KEYS[1], ARGV[2]) == 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
  return 1
end
return 0
