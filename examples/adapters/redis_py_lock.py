#!/usr/bin/python3
"""A locklab adapter for redis-py's redis.lock.Lock (SET NX PX to acquire, a
Lua compare-and-delete to release, a Lua compare-and-pexpire to extend).

Copy it to test your own lock library: replace the three handlers. The
protocol is in harness/adapter/PROTOCOL.md; its loop, the --redis argument and
the connection's timeouts are lock_impls/libraries/protocol.py (shared with the
lab's other Python adapter): copy that too, beside your copy of this file.

    locklab runs:  redis_py_lock.py --redis host:port[,host:port...]
    stdin:         one JSON request per line
    stdout:        one JSON response per line (nothing else: logs go to stderr)

redis.lock.Lock works on one Redis server: this adapter uses the first one.
"""
import os
import sys
import time

import redis
from redis.exceptions import ConnectionError, LockNotOwnedError, RedisError, TimeoutError
from redis.lock import Lock

# protocol.py: beside this file (a copy), else lock_impls/libraries/.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lock_impls", "libraries"))
import protocol  # noqa: E402

# How often a waiting acquire tries again, in seconds (redis-py's default is 0.1).
RETRY_SLEEP = 0.02


def outcome_of(error):
    """The response for a Redis error. A timeout or a broken connection may
    have hit after Redis ran the command: the outcome is unknown. Any other
    error is Redis refusing the command (e.g. READONLY): definitely not done."""
    if isinstance(error, (ConnectionError, TimeoutError)):
        return {"ok": False, "unknown": True, "error": str(error)}
    return {"ok": False, "error": str(error)}


class TimedLock(Lock):
    """redis-py's Lock, noting when it sent the try that took the lock: a
    waiting acquire() calls do_acquire() (one SET NX PX) every RETRY_SLEEP
    until it answers True. The lab only sees when acquire started and
    returned; attempt_ns tells it when the winning SET was sent (read just
    before it, never after; time.monotonic_ns() is the lab's clock, and
    protocol.py's hello carries "monotonic_ns" so that the lab can use it)."""

    attempt_ns = None

    def do_acquire(self, token):
        sent = time.monotonic_ns()
        if not super().do_acquire(token):
            return False
        self.attempt_ns = sent
        return True


def lock_for(client, request, **options):
    """A redis-py Lock on request["lock"]."""
    return TimedLock(client, request["lock"], sleep=RETRY_SLEEP, thread_local=False, **options)


def held_lock(client, request, **options):
    """A redis-py Lock that believes it holds request["lock"] as request["owner"]:
    the owner value is all redis-py needs to release or extend."""
    lock = lock_for(client, request, **options)
    lock.local.token = request["owner"].encode()
    return lock


def acquire(client, request):
    lock = lock_for(client, request, timeout=request["ttl_ms"] / 1000.0,
                    blocking_timeout=request["wait_ms"] / 1000.0)
    if not lock.acquire():
        return {"ok": False, "error": "held by another client"}
    # redis-py gives its user no deadline beyond the TTL it set, so the holder
    # may act for ttl_ms from the start of acquire: the lab's default when the
    # response has no "validity_ms".
    return {"ok": True, "owner": lock.local.token.decode(), "attempt_ns": lock.attempt_ns}


def release(client, request):
    try:
        held_lock(client, request).release()
    except LockNotOwnedError:
        return {"ok": False, "error": "not held"}
    return {"ok": True}


def extend(client, request):
    ttl = request["ttl_ms"] / 1000.0
    try:
        held_lock(client, request, timeout=ttl).extend(ttl, replace_ttl=True)
    except LockNotOwnedError:
        return {"ok": False, "error": "not held"}
    return {"ok": True}


HANDLERS = {"acquire": acquire, "release": release, "extend": extend}


def handle(client, request):
    op = request.get("op")
    if op == "hello":
        return protocol.hello("redis-py-lock", "redis-py " + redis.__version__, connect=True)
    if op == "connect":  # before the story's clock starts: the connection an application has open
        try:
            client.ping()
        except RedisError as error:
            return {"ok": False, "error": "redis: %s" % error}
        return {"ok": True}
    if op not in HANDLERS:
        return protocol.unknown_op(op)
    try:
        return HANDLERS[op](client, request)
    except RedisError as error:
        return outcome_of(error)


def main():
    host, port = protocol.first_endpoint(__doc__.splitlines()[0])
    # 1 s socket timeouts and the target's credentials (protocol.py).
    client = redis.Redis(host=host, port=port, **protocol.connection_options())
    protocol.serve(lambda request: handle(client, request))


if __name__ == "__main__":
    main()
