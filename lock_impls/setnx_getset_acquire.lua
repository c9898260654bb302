-- Acquire (setnx-getset-lua): the SETNX/GET/GETSET recipe in one script, with
-- the client's own clock passed in, plus a server-side expiry as a safety net.
-- KEYS[1] = lock key; ARGV[1] = client now (ms), ARGV[2] = our deadline
-- (now + ttl + 1, ms), ARGV[3] = ttl (ms).
-- Returns our deadline when acquired, nil when the lock is held.
local now = tonumber(ARGV[1])
if redis.call("SETNX", KEYS[1], ARGV[2]) == 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[3])
  return ARGV[2]
end
local current = tonumber(redis.call("GET", KEYS[1]))
if current and current < now then
  local old = tonumber(redis.call("GETSET", KEYS[1], ARGV[2]))
  if old and old < now then
    redis.call("PEXPIRE", KEYS[1], ARGV[3])
    return ARGV[2]
  end
end
return false
