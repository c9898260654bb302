-- Release: delete the lock only if it still holds our owner value.
-- KEYS[1] = lock key, ARGV[1] = owner. Returns 1 if deleted, 0 if not ours.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0
