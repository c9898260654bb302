#!/usr/bin/python3
"""A locklab adapter for redis-py's asyncio Lock (redis.asyncio.lock.Lock) from
Debian's python3-redis 4.3.4: SET NX PX to acquire, a Lua compare-and-delete to
release, a Lua compare-and-pexpire to extend, on one Redis node (the first
--redis endpoint). See README.md.

    locklab runs:  /usr/bin/python3 adapter.py --redis host:port[,host:port...]

The protocol (the --redis argument, the connection's timeouts, the JSON-lines
loop on asyncio, the reset that keeps the process for the next run) is
../protocol.py, shared with examples/adapters/redis_py_lock.py.
A release may carry "cancel_after_ms" (harness/adapter/PROTOCOL.md,
sent when a scenario sets workload.params.release_cancel_after_ms): the
library call is then cancelled after that long (asyncio.wait_for), as an
application's own timeout would, and the answer is unknown.
"""
import asyncio
import os
import re
import sys
import time

import redis
import redis.asyncio as aioredis
from redis.asyncio.lock import Lock
from redis.exceptions import ConnectionError, LockError, LockNotOwnedError, RedisError, TimeoutError

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import protocol  # noqa: E402  (../protocol.py)

# Errors raised while connecting, before a command was written.
NOT_SENT = re.compile(r"^(Timeout connecting to server|Error (\S+ )?connecting to )")


def outcome_of(error):
    """A timeout or a broken connection may have hit after Redis ran the
    command: unknown, unless it happened while connecting. Any other error is
    Redis refusing the command (e.g. READONLY): definitely not done."""
    if isinstance(error, (ConnectionError, TimeoutError)) and not NOT_SENT.match(str(error)):
        return {"ok": False, "unknown": True, "error": str(error)}
    return {"ok": False, "error": str(error)}


class TimedLock(Lock):
    """redis-py's Lock, noting when it sent the try that took the lock.
    acquire() calls do_acquire() once per try (every `sleep` seconds), which
    sends one SET NX PX and returns True only when Redis answered that it
    set the key: the time read before that call is the attempt_ns."""

    attempt_ns = None

    async def do_acquire(self, token):
        sent = time.monotonic_ns()
        if not await super().do_acquire(token):
            return False
        self.attempt_ns = sent
        return True


class Adapter:
    """One run's client and locks, on that run's endpoints
    (protocol.run_async builds one per run)."""

    def __init__(self, endpoints):
        host, port = endpoints[0]
        # redis-py's defaults but for protocol.connection_options(): 1 s socket
        # timeouts, the target's credentials; no retries (the default).
        self.client = aioredis.Redis(host=host, port=port, **protocol.connection_options())
        # Locks acquired here, by owner (the token redis-py stored). A lock
        # whose release or extend had an unknown outcome stays here, as the
        # application would keep its Lock object and may try again.
        self.held = {}

    def lock_of(self, request, **options):
        """The Lock acquired here as request["owner"], or one that believes it
        holds it: the token is all redis-py needs to release or extend."""
        lock = self.held.get(request["owner"])
        if lock is None:
            lock = Lock(self.client, request["lock"], **options)
            lock.local.token = request["owner"].encode()
        return lock

    async def acquire(self, request):
        # Options: redis-py's defaults (Lock.__init__ docstring: sleep=0.1,
        # thread_local=True) but for what the lab asks: timeout (the lease)
        # = ttl_ms, blocking_timeout = wait_ms.
        lock = TimedLock(self.client, request["lock"], timeout=request["ttl_ms"] / 1000.0,
                         blocking_timeout=request["wait_ms"] / 1000.0)
        if not await lock.acquire():
            return {"ok": False, "error": "held by another client"}
        owner = lock.local.token.decode()
        self.held[owner] = lock
        # redis-py gives its user no deadline beyond the TTL it set: the
        # lab's default when the response has no "validity_ms".
        return {"ok": True, "owner": owner, "attempt_ns": lock.attempt_ns}

    async def release(self, request):
        lock = self.lock_of(request)
        try:
            # release() clears the token, then returns the coroutine that
            # runs the script (redis/asyncio/lock.py lines 246-252).
            await lock.release()
        except LockNotOwnedError:
            self.held.pop(request["owner"], None)
            return {"ok": False, "error": "not held"}
        except LockError as error:  # "Cannot release an unlocked lock": nothing sent
            self.held.pop(request["owner"], None)
            return {"ok": False, "error": "not held: %s" % error}
        self.held.pop(request["owner"], None)
        return {"ok": True}

    async def extend(self, request):
        ttl = request["ttl_ms"] / 1000.0
        lock = self.lock_of(request, timeout=ttl)
        try:
            await lock.extend(ttl, replace_ttl=True)
        except LockNotOwnedError:
            return {"ok": False, "error": "not held"}
        except LockError as error:  # no token or no timeout: nothing sent
            return {"ok": False, "error": "not held: %s" % error}
        return {"ok": True}

    async def handle(self, request):
        op = request.get("op")
        if op == "hello":
            return protocol.hello("redis-py-asyncio-lock", "redis-py " + redis.__version__,
                                  connect=True)
        if op == "connect":  # before the story's clock starts, as an application has it open
            try:
                await self.client.ping()
            except RedisError as error:
                return {"ok": False, "error": "redis: %s" % error}
            return {"ok": True}
        handler = {"acquire": self.acquire, "release": self.release, "extend": self.extend}.get(op)
        if handler is None:
            return protocol.unknown_op(op)
        call = handler(request)
        cancel_after = request.get("cancel_after_ms")
        try:
            if cancel_after is None:
                return await call
            return await asyncio.wait_for(call, cancel_after / 1000.0)
        except asyncio.TimeoutError:
            return {"ok": False, "unknown": True,
                    "error": "cancelled after %s ms (asyncio.wait_for)" % cancel_after}
        except RedisError as error:
            return outcome_of(error)

    async def close(self):
        """The run is over: the keys held stay, and the library runs nothing
        in the background; the client's connections close."""
        self.held.clear()
        await self.client.close()


async def main():
    arguments = protocol.arguments(__doc__.splitlines()[0])
    await protocol.run_async(Adapter, arguments.redis)


if __name__ == "__main__":
    asyncio.run(main())
