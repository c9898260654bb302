"""A locklab adapter for pottery's Redlock (brainix/pottery, pottery.Redlock):
SET redlock:<key> <uuid4> PX NX on every master in parallel (a thread pool
that returns once a majority answered and the validity left is positive),
Lua compare-and-PEXPIRE to extend (at most num_extensions times), Lua
compare-and-DEL to release, a majority required for each; one redis.Redis per
--redis endpoint. See README.md.

    run (in lock_impls/libraries):
        python/.venv/bin/python python/pottery_redlock.py --redis host:port[,...]
"""
import threading
import time

import redis
from pottery import Redlock
from pottery.exceptions import ExtendUnlockedLock, ReleaseUnlockedLock, TooManyExtensions
from redis.exceptions import ConnectionError, RedisError, TimeoutError

import common
from common import protocol

ARGS = protocol.arguments(__doc__.splitlines()[0])


class Master(redis.Redis):
    """A master's client, noting when the first SET of each value was sent.
    pottery's attempt (Redlock._acquire_masters) draws a new uuid4 and sends
    SET key <uuid> PX NX to every master from its thread pool; the value
    tells which attempt a SET belongs to, and the first SET sent with the
    winning attempt's uuid (lock._uuid once acquire() returned True) is sent
    no later than any SET that made its majority: the attempt_ns."""

    first_sent = {}  # value -> the earliest send of a SET with it, any master
    guard = threading.Lock()

    def set(self, name, value, *args, **kwargs):
        sent = time.monotonic_ns()
        with Master.guard:
            Master.first_sent[value] = min(sent, Master.first_sent.get(value, sent))
        return super().set(name, value, *args, **kwargs)


# pottery catches a master's RedisError and only logs it (logger 'pottery',
# logger.exception): collected here to tell "refused" from "unknown".
LOGGED = common.LoggedErrors("pottery")


def in_doubt(errors):
    """A timeout or a lost connection after a command may have been written
    to some master: a key of ours may remain there."""
    return [message for message, error in errors
            if isinstance(error, (ConnectionError, TimeoutError)) and common.sent(error)]


def failed(what, errors):
    doubt = in_doubt(errors)
    if doubt:
        return {"ok": False, "unknown": True, "error": "%s; %s" % (what, doubt[0])}
    return {"ok": False, "error": what}


class Adapter:
    """One run's masters and locks, on that run's endpoints (protocol.run
    builds one per run)."""

    def __init__(self, endpoints):
        self.masters = [Master(host=host, port=port, **protocol.connection_options())
                        for host, port in endpoints]
        self.locks = {}  # owner (the Redlock's uuid) -> the Redlock that acquired it

    def redlock(self, request):
        # One Redlock per acquisition (acquire() draws a new uuid on the object).
        # auto_release_time = the lease in seconds (pottery uses it as PX in ms);
        # pottery's defaults otherwise (num_extensions=3, raise_on_redis_errors
        # False, retry delay uniform(0, 0.2 s)).
        return Redlock(key=request["lock"], masters=set(self.masters),
                       auto_release_time=request["ttl_ms"] / 1000.0)

    def connect(self, request):
        return common.ping_all(self.masters)

    def acquire(self, request):
        lock = self.redlock(request)
        LOGGED.take()
        with Master.guard:
            Master.first_sent.clear()  # earlier acquires' attempts
        try:
            if request["wait_ms"] <= 0:
                acquired = lock.acquire(blocking=False)
            else:
                acquired = lock.acquire(blocking=True, timeout=request["wait_ms"] / 1000.0)
        except RedisError as error:
            return common.outcome_of(error)
        errors = LOGGED.take()
        if not acquired:
            # pottery released on every master after a failed attempt; a master
            # that timed out may still hold our key.
            return failed("no quorum within the wait", errors)
        self.locks[lock._uuid] = lock
        # pottery checked that validity (auto_release_time - drift - elapsed) was
        # positive and tells its user nothing more: the lab's default (ttl_ms from
        # the start of the acquire).
        with Master.guard:
            attempt_ns = Master.first_sent.get(lock._uuid)
        return {"ok": True, "owner": lock._uuid, "attempt_ns": attempt_ns}

    def lock_of(self, request):
        lock = self.locks.get(request["owner"])
        if lock is None:
            lock = self.redlock({"lock": request["lock"], "ttl_ms": request.get("ttl_ms", 10000)})
            lock._uuid = request["owner"]  # the value pottery compares on release/extend
        return lock

    def release(self, request):
        lock = self.lock_of(request)
        LOGGED.take()
        try:
            lock.release()
        except ReleaseUnlockedLock:
            self.locks.pop(request["owner"], None)
            return failed("not held (ReleaseUnlockedLock)", LOGGED.take())
        self.locks.pop(request["owner"], None)
        return {"ok": True}

    def extend(self, request):
        lock = self.lock_of(request)
        lock.auto_release_time = request["ttl_ms"] / 1000.0
        LOGGED.take()
        try:
            lock.extend()
        except TooManyExtensions:
            return {"ok": False, "error": "TooManyExtensions (num_extensions=%d)" % lock.num_extensions}
        except ExtendUnlockedLock:
            return failed("not held (ExtendUnlockedLock)", LOGGED.take())
        return {"ok": True}

    def close(self):
        """The run is over: the keys held stay. pottery's thread pools do not
        wait for the masters that had not answered when a call returned
        (pottery.executor.BailOutExecutor): those threads end first (within
        the 1 s socket timeout), so that none opens a connection after the
        masters' are closed."""
        self.locks.clear()
        left = protocol.threads_left(protocol.RESET_WAIT_S)
        if left:
            raise RuntimeError("pottery's threads still running: " + ", ".join(t.name for t in left))
        common.close_all(self.masters)
        LOGGED.take()
        with Master.guard:
            Master.first_sent.clear()


HELLO = protocol.hello("pottery-redlock", protocol.version_of("pottery"),
                       multi_node=True, connect=True, incidents=True)

if __name__ == "__main__":
    protocol.run(HELLO, Adapter, ARGS.redis)
