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


class Adapter:
    """One run's client and locks, on that run's endpoints (protocol.run
    builds one per run)."""

    def __init__(self, endpoints):
        host, port = endpoints[0]
        self.client = redis.StrictRedis(host=host, port=port, **protocol.connection_options())
        # As sherlock's README configures it: the Redis backend and its client.
        sherlock.configure(backend=sherlock.backends.REDIS, client=self.client)
        self.locks = {}  # owner -> the RedisLock that acquired it (one per acquisition)

    def connect(self, request):
        return common.ping_all([self.client])

    def acquire(self, request):
        # expire = the lease, timeout = wait_ms, retry_interval: sherlock's
        # default 0.1 s.
        lock = RedisLock(request["lock"], client=self.client, expire=seconds(request["ttl_ms"]),
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
        self.locks[lock._owner] = lock
        # sherlock tells its user nothing beyond the expire it was given: the
        # lab's default (ttl_ms from the start of the acquire).
        return {"ok": True, "owner": lock._owner, "attempt_ns": lock.attempt_ns}

    def lock_of(self, request, ttl_ms=None):
        lock = self.locks.get(request["owner"])
        if lock is None:
            lock = sherlock.RedisLock(request["lock"], client=self.client)
            lock._owner = request["owner"]  # the value sherlock compares
        if ttl_ms is not None:
            lock.expire = seconds(ttl_ms)
        return lock

    def done_with(self, lock, request):
        """A lock built here for an owner this process does not hold (another
        process's, or one released) forgets that owner once used: its __del__
        would otherwise release it whenever it is collected, deleting a key
        nobody asked to delete."""
        if self.locks.get(request["owner"]) is not lock:
            lock._owner = None

    def release(self, request):
        lock = self.lock_of(request)
        try:
            lock.release()
        except sherlock.LockException as error:
            self.locks.pop(request["owner"], None)
            return {"ok": False, "error": "not held: %s" % error}
        except RedisError as error:
            return common.outcome_of(error)
        finally:
            self.done_with(lock, request)
        self.locks.pop(request["owner"], None)
        return {"ok": True}

    def extend(self, request):
        lock = self.lock_of(request, request["ttl_ms"])
        try:
            renewed = lock.renew()
        except sherlock.LockException as error:
            return {"ok": False, "error": "not held: %s" % error}
        except redis.exceptions.ResponseError as error:
            return {"ok": False, "error": "ResponseError: %s" % error}
        except RedisError as error:
            return common.outcome_of(error)
        finally:
            self.done_with(lock, request)
        if not renewed:
            return {"ok": False, "error": "not held"}
        return {"ok": True}

    def close(self):
        """The run is over: the keys held stay. A sherlock lock releases
        itself when it is garbage collected (BaseLock.__del__), so the
        locks still held forget their owner first, as a process that stopped
        would never have released them; then the connections close."""
        for lock in self.locks.values():
            lock._owner = None
        self.locks.clear()
        common.close_all([self.client])


HELLO = protocol.hello("sherlock-redis-lock", protocol.version_of("sherlock"),
                       connect=True, incidents=True)

if __name__ == "__main__":
    protocol.run(HELLO, Adapter, ARGS.redis)
