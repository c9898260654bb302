-- Extend: reset the TTL only if the lock still holds our owner value.
-- KEYS[1] = lock key, ARGV[1] = owner, ARGV[2] = ttl in ms. Returns 1 or 0.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0
