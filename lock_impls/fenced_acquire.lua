-- Acquire (fenced): SET NX PX, and when it succeeds, the next fencing token
-- from a per-lock counter, in one atomic step.
-- KEYS[1] = lock key, KEYS[2] = fencing counter key; ARGV[1] = owner,
-- ARGV[2] = ttl in ms. Returns the token when acquired, nil when held.
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return redis.call("INCR", KEYS[2])
end
return false
