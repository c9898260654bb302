"""A locklab adapter for python-redis-lock (ionelmc, redis_lock.Lock): SET
lock:<name> <id> NX EX <whole seconds>, waiting on BLPOP lock-signal:<name>,
a Lua compare-and-delete (+ LPUSH of the signal) to release, a Lua
compare-and-EXPIRE to extend; one Redis node (the first --redis endpoint).
--auto-renewal: Lock(..., auto_renewal=True), a daemon thread extending the
lease every 2/3 of expire. See README.md.

    run (in lock_impls/libraries):
        python/.venv/bin/python python/python_redis_lock.py [--auto-renewal] --redis host:port[,...]
"""
import math
import threading
import time

import redis
import redis_lock
from redis.exceptions import RedisError

import common
from common import protocol

ARGS = protocol.arguments(__doc__.splitlines()[0], flags=("auto-renewal",))
RENEW = ARGS.auto_renewal


class Client(redis.StrictRedis):
    """The redis-py client the Lock is given: the lab's 1 s timeouts
    (protocol.connection_options()), except for the library's BLPOP, a wait
    of up to `timeout` whole seconds, which runs on a client whose read
    timeout is that wait + 1 s (as an application giving redis-py a socket
    timeout must); and a note of the last command, to tell whether an error
    came from the SET (the outcome is unknown) or from the BLPOP wait after
    a refused SET (nothing of ours in Redis)."""

    def __init__(self, host, port):
        super().__init__(host=host, port=port, **protocol.connection_options())
        self.host, self.port = host, port
        self.blocking = {}
        self.last = threading.local()

    def set(self, *args, **kwargs):
        self.last.command = "SET"
        sent = time.monotonic_ns()
        done = super().set(*args, **kwargs)
        if done:
            self.last.won_ns = sent  # the SET NX that took the lock: its attempt_ns
        return done

    def blpop(self, keys, timeout=0):
        self.last.command = "BLPOP"
        client = self.blocking.get(timeout)
        if client is None:
            options = protocol.connection_options()
            options["socket_timeout"] = float(timeout or 0) + 1.0 if timeout else None
            client = self.blocking[timeout] = redis.StrictRedis(host=self.host, port=self.port, **options)
        return client.blpop(keys, timeout)

    def close_all(self):
        common.close_all([self] + list(self.blocking.values()))


def report_renewals(lock, name):
    """The renewal thread calls lock.extend(expire=lock._expire) on the Lock
    itself (Lock._lock_renewer): this Lock's extend, wrapped, reports each
    such call to the lab (protocol.renewed) and behaves as before. Calls from
    the adapter's own thread (the lab's extend) are not renewals."""
    extend = lock.extend

    def renew(expire=None):
        if threading.current_thread() is threading.main_thread():
            return extend(expire)
        ttl_ms = int(expire or lock._expire or 0) * 1000
        sent = time.monotonic_ns()
        try:
            extend(expire)
        except RedisError as error:
            unknown = common.outcome_of(error).get("unknown", False)
            protocol.renewed(name, lock.id, ttl_ms, sent, time.monotonic_ns(), False, unknown)
            raise
        except (redis_lock.NotAcquired, redis_lock.NotExpirable):
            protocol.renewed(name, lock.id, ttl_ms, sent, time.monotonic_ns(), False)
            raise
        except BaseException:
            protocol.renewed(name, lock.id, ttl_ms, sent, time.monotonic_ns(), False, True)
            raise
        protocol.renewed(name, lock.id, ttl_ms, sent, time.monotonic_ns(), True)

    lock.extend = renew


class Adapter:
    """One run's client and locks, on that run's endpoints (protocol.run
    builds one per run)."""

    def __init__(self, endpoints):
        host, port = endpoints[0]
        self.client = Client(host, port)
        self.locks = {}  # owner -> the Lock that acquired it (one Lock per acquisition)

    def connect(self, request):
        return common.ping_all([self.client])

    def acquire(self, request):
        # expire = the lease in seconds, as the library's users pass it; the
        # library keeps int(expire) (whole seconds: 1.5 s becomes 1 s, under
        # 1 s becomes 0, and SET ... EX 0 is refused by Redis).
        lock = redis_lock.Lock(self.client, request["lock"], expire=request["ttl_ms"] / 1000.0,
                               auto_renewal=RENEW)
        if RENEW:
            report_renewals(lock, request["lock"])
        self.client.last.command = None
        self.client.last.won_ns = None
        try:
            if request["wait_ms"] <= 0:
                acquired = lock.acquire(blocking=False)
            else:
                # timeout: "An integer value specifying the maximum number of
                # seconds to block" (whole seconds: rounded up, since 0 would
                # mean waiting for ever); without renewal the library refuses a
                # timeout above expire (TimeoutTooLarge): capped at it.
                timeout = max(1, math.ceil(request["wait_ms"] / 1000.0))
                if not RENEW and lock._expire and timeout > lock._expire:
                    timeout = lock._expire
                acquired = lock.acquire(blocking=True, timeout=timeout)
        except RedisError as error:
            if self.client.last.command == "BLPOP":
                # The SET before it was answered "busy": nothing of ours is set.
                return {"ok": False, "error": "waiting (BLPOP) failed: %s: %s" % (type(error).__name__, error)}
            return common.outcome_of(error)
        if not acquired:
            return {"ok": False, "error": "held by another client"}
        self.locks[lock.id] = lock
        response = {"ok": True, "owner": lock.id, "attempt_ns": self.client.last.won_ns}
        if RENEW:
            response["validity_ms"] = None  # renewed in the background, no deadline
        # Without renewal the library tells its user nothing beyond the expire it
        # was given: the lab's default (ttl_ms from the start of the acquire).
        return response

    def lock_of(self, request):
        lock = self.locks.get(request["owner"])
        if lock is None:
            # "Lock("name", id=id_from_other_place).release()" (its docstring).
            lock = redis_lock.Lock(self.client, request["lock"], id=request["owner"])
        return lock

    def release(self, request):
        lock = self.lock_of(request)
        try:
            lock.release()  # stops the renewal thread first, then the script
        except redis_lock.NotAcquired as error:
            self.locks.pop(request["owner"], None)
            return {"ok": False, "error": "not held: %s" % error}
        except RedisError as error:
            return common.outcome_of(error)  # the Lock stays, as the application keeps it
        self.locks.pop(request["owner"], None)
        return {"ok": True}

    def extend(self, request):
        lock = self.lock_of(request)
        try:
            lock.extend(expire=request["ttl_ms"] / 1000.0)
        except (redis_lock.NotAcquired, redis_lock.NotExpirable) as error:
            return {"ok": False, "error": "not held: %s" % error}
        except RedisError as error:
            return common.outcome_of(error)
        return {"ok": True}

    def held(self, request):
        """The library keeps no flag and calls nobody when a renewal fails: its
        renewal thread raises (NotAcquired, or the client's TimeoutError) and
        ends. Whether that thread is still running is all it knows of the lease
        (Lock._lock_renewal_thread)."""
        if not RENEW:
            return {"ok": False, "error": "no background renewal (auto_renewal=False)"}
        lock = self.locks.get(request["owner"])
        if lock is None:
            return {"ok": True, "held": False}
        thread = lock._lock_renewal_thread
        return {"ok": True, "held": thread is not None and thread.is_alive()}

    def close(self):
        """The run is over: the locks still held keep their keys, as a
        process that stopped would leave them. Their renewal threads end as
        release() ends them (Lock._stop_lock_renewer: its event set, the
        thread joined, a renewal in flight finished first), without the
        release script; then the connections close."""
        for lock in self.locks.values():
            lock._stop_lock_renewer()
        self.locks.clear()
        self.client.close_all()


HELLO = protocol.hello("python-redis-lock-auto-renewal" if RENEW else "python-redis-lock",
                       protocol.version_of("python-redis-lock"),
                       renews=RENEW, renewals=RENEW, connect=True, incidents=True)

if __name__ == "__main__":
    protocol.run(HELLO, Adapter, ARGS.redis)
