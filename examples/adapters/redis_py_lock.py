#!/usr/bin/python3
"""A locklab adapter for redis-py's redis.lock.Lock (SET NX PX to acquire, a
Lua compare-and-delete to release, a Lua compare-and-pexpire to extend).

Copy it to test your own lock library: keep the loop in main(), replace the
three handlers. The protocol is in harness/adapter/PROTOCOL.md.

    locklab runs:  redis_py_lock.py --redis host:port[,host:port...]
    stdin:         one JSON request per line
    stdout:        one JSON response per line (nothing else: logs go to stderr)

redis.lock.Lock works on one Redis server: this adapter uses the first one.
"""
import argparse
import json
import os
import sys

import redis
from redis.exceptions import ConnectionError, LockNotOwnedError, RedisError, TimeoutError
from redis.lock import Lock

# How often a waiting acquire tries again, in seconds (redis-py's default is 0.1).
RETRY_SLEEP = 0.02


def outcome_of(error):
    """The response for a Redis error. A timeout or a broken connection may
    have hit after Redis ran the command: the outcome is unknown. Any other
    error is Redis refusing the command (e.g. READONLY): definitely not done."""
    if isinstance(error, (ConnectionError, TimeoutError)):
        return {"ok": False, "unknown": True, "error": str(error)}
    return {"ok": False, "error": str(error)}


def lock_for(client, request, **options):
    """A redis-py Lock on request["lock"]."""
    return Lock(client, request["lock"], sleep=RETRY_SLEEP, thread_local=False, **options)


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
    return {"ok": True, "owner": lock.local.token.decode()}


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
        return {"ok": True, "name": "redis-py-lock", "version": "redis-py " + redis.__version__,
                "reentrant": False, "fencing": False}
    if op not in HANDLERS:
        return {"ok": False, "error": "unknown op %r" % op}
    try:
        return HANDLERS[op](client, request)
    except RedisError as error:
        return outcome_of(error)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", required=True, help="host:port[,host:port...]")
    args = parser.parse_args()
    host, port = args.redis.split(",")[0].rsplit(":", 1)
    # Short socket timeouts: a partitioned or paused server gives an unknown
    # outcome within a second instead of a silent adapter.
    # On a target with credentials the lab passes them in the environment.
    client = redis.Redis(host=host, port=int(port), socket_timeout=1.0,
                         socket_connect_timeout=0.5,
                         username=os.environ.get("LOCKLAB_REDIS_USERNAME") or None,
                         password=os.environ.get("LOCKLAB_REDIS_PASSWORD") or None)
    for line in sys.stdin:
        request = json.loads(line)
        response = handle(client, request)
        response["id"] = request["id"]
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
