-- Extend a timestamp lock: store a new value with a new TTL, only if the key
-- still holds our value.
-- KEYS[1] = lock key, ARGV[1] = our value, ARGV[2] = new value, ARGV[3] = ttl
-- in ms. Returns 1 if replaced, 0 if not ours.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
  return 1
end
return 0
