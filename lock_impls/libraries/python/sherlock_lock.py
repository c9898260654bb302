"""A locklab adapter for sherlock's RedisLock (py-sherlock/sherlock,
sherlock.RedisLock): a Lua SETNX + EXPIRE to acquire, polled every
retry_interval for `timeout` seconds, a Lua compare-and-DEL to release, a Lua
compare-and-EXPIRE to renew; one Redis node (the first --redis endpoint).
See README.md.

    run (in lock_impls/libraries):
        python/.venv/bin/python python/sherlock_lock.py --redis host:port[,...]
"""
import time

import redis
import sherlock
from redis.exceptions import RedisError

import common
from common import protocol

ARGS = protocol.arguments(__doc__.splitlines()[0])
HOST, PORT = protocol.endpoints_of(ARGS.redis)[0]
CLIENT = redis.StrictRedis(host=HOST, port=PORT, **protocol.connection_options())
# As sherlock's README configures it: the Redis backend and its client.
sherlock.configure(backend=sherlock.backends.REDIS, client=CLIENT)
HELD = {}  # owner -> the RedisLock that acquired it (one per acquisition)


class RedisLock(sherlock.RedisLock):
    """sherlock's RedisLock, noting when it sent the try that took the lock.
    acquire() calls _acquire() once per try, and _acquire() runs the acquire
    script once (EVALSHA; redis-py's Script sends SCRIPT LOAD and EVALSHA
    again after NOSCRIPT, later still) and returns True only when the
    script's SETNX answered 1: the time read before that call is the
    attempt_ns."""

    attempt_ns = None

    def _acquire(self):
        sent = time.monotonic_ns()
        if not super()._acquire():
            return False
        self.attempt_ns = sent
        return True


def seconds(ttl_ms):
    """expire in seconds as its users write it: 2 for 2000 ms, 1.5 for 1500
    ms (the docstring says `float expire`)."""
    return ttl_ms // 1000 if ttl_ms % 1000 == 0 else ttl_ms / 1000.0


def acquire(request):
    # expire = the lease, timeout = wait_ms, retry_interval: sherlock's
    # default 0.1 s.
    lock = RedisLock(request["lock"], client=CLIENT, expire=seconds(request["ttl_ms"]),
                     timeout=request["wait_ms"] / 1000.0)
    try:
        acquired = lock.acquire(blocking=request["wait_ms"] > 0)
    except sherlock.LockTimeoutException as error:
        return {"ok": False, "error": "held by another client: %s" % error}
    except redis.exceptions.ResponseError as error:
        # The script's EXPIRE was refused after its SETNX ran (a script is not
        # rolled back): our key may be set, without a TTL.
        return {"ok": False, "unknown": True, "error": "ResponseError: %s" % error}
    except RedisError as error:
        return common.outcome_of(error)
    if not acquired:
        return {"ok": False, "error": "held by another client"}
    HELD[lock._owner] = lock
    # sherlock tells its user nothing beyond the expire it was given: the
    # lab's default (ttl_ms from the start of the acquire).
    return {"ok": True, "owner": lock._owner, "attempt_ns": lock.attempt_ns}


def lock_of(request, ttl_ms=None):
    lock = HELD.get(request["owner"])
    if lock is None:
        lock = sherlock.RedisLock(request["lock"], client=CLIENT)
        lock._owner = request["owner"]  # the value sherlock compares
    if ttl_ms is not None:
        lock.expire = seconds(ttl_ms)
    return lock


def release(request):
    lock = lock_of(request)
    try:
        lock.release()
    except sherlock.LockException as error:
        HELD.pop(request["owner"], None)
        lock._owner = None  # its __del__ would try again
        return {"ok": False, "error": "not held: %s" % error}
    except RedisError as error:
        return common.outcome_of(error)
    HELD.pop(request["owner"], None)
    return {"ok": True}


def extend(request):
    lock = lock_of(request, request["ttl_ms"])
    try:
        renewed = lock.renew()
    except sherlock.LockException as error:
        return {"ok": False, "error": "not held: %s" % error}
    except redis.exceptions.ResponseError as error:
        return {"ok": False, "error": "ResponseError: %s" % error}
    except RedisError as error:
        return common.outcome_of(error)
    if not renewed:
        return {"ok": False, "error": "not held"}
    return {"ok": True}


HANDLERS = {"acquire": acquire, "release": release, "extend": extend,
            "connect": lambda request: common.ping_all([CLIENT])}


HELLO = protocol.hello("sherlock-redis-lock", protocol.version_of("sherlock"),
                       connect=True, incidents=True)

if __name__ == "__main__":
    protocol.run(HELLO, HANDLERS)
