"""A locklab adapter for aioredlock (joanvila/aioredlock, Aioredlock on
aioredis 1.3.1): a Lua "GET; if none or ours then SET PX" on every --redis
endpoint at once for acquire and for extend, a majority within the lease less
drift, retried retry_count times; a Lua "GET; if none OK, if ours DEL" to
release. --watchdog: lock_timeout=None, so the library's watchdog extends
the lock every 0.6 x internal_lock_timeout and marks it invalid when an
extension fails. See README.md.

    run (in lock_impls/libraries):
        python/.venv/bin/python python/aioredlock_lock.py [--watchdog] --redis host:port[,...]
"""
import asyncio
import re
import time
import uuid

import aioredis
from aioredlock import Aioredlock, Lock
from aioredlock.errors import LockAcquiringError, LockError

import common
from common import protocol

ARGS = protocol.arguments(__doc__.splitlines()[0], flags=("watchdog",))
WATCHDOG = ARGS.watchdog
# aioredlock only logs a node's connection error (log.error, logger
# aioredlock.redis) and raises the quorum's failure: what it logged during a
# call says whether a command may have reached a node without an answer.
LOGGED = common.LoggedErrors("aioredlock")
# aioredis 1.x has no command (read) timeout: a node that stops answering
# keeps a call waiting for ever. The adapter gives each call a deadline, as
# an application's asyncio.wait_for would, and answers unknown after it.
DEADLINE_S = 2.0
NOT_CONNECTED = re.compile(r"ConnectionRefusedError|Connect call failed|TimeoutError\(\)")


class Watchdogs:
    """The watchdog (Aioredlock._auto_extend) calls self.extend(lock) with no
    lock_timeout: the manager's extend, wrapped, reports each such call to
    the lab (protocol.renewed) and behaves as before. The lab's own extend
    passes a lock_timeout and is no renewal. aioredlock logs its nodes'
    errors without saying which call they belong to, so a renewal that
    failed is reported unknown.

    stop() ends the watchdogs without releasing: a watchdog cancelled while
    its extension runs has the library delete the key in the background
    (Aioredlock._set_lock's cleanup on CancelledError), so the renewals in
    flight end first, no new one starts, and each watchdog is cancelled in
    its sleep."""

    def __init__(self, manager):
        self.manager = manager
        self.extend = manager.extend
        self.in_flight = {}  # the watchdog's task -> its renewal's lock, while it runs
        self.stopping = False
        manager.extend = self.renewing

    async def renewing(self, lock, lock_timeout=None):
        if lock_timeout is not None:
            return await self.extend(lock, lock_timeout)
        if self.stopping:
            return None
        ttl_ms = int((lock.lock_timeout or self.manager.internal_lock_timeout) * 1000)
        sent = time.monotonic_ns()
        task = asyncio.current_task()
        self.in_flight[task] = lock
        try:
            await self.extend(lock)
        except BaseException:
            protocol.renewed(lock.resource, lock.id, ttl_ms, sent, time.monotonic_ns(), False, True)
            raise
        finally:
            self.in_flight.pop(task, None)
        protocol.renewed(lock.resource, lock.id, ttl_ms, sent, time.monotonic_ns(), True)

    async def stop(self):
        self.stopping = True
        if self.in_flight:
            # Each renewal is one call of the library, under its deadline.
            _, late = await asyncio.wait(list(self.in_flight), timeout=DEADLINE_S)
            if late:
                raise RuntimeError("a renewal still running %.1f s after the reset" % DEADLINE_S)
        watchdogs = list(self.manager._watchdogs.values())
        for watchdog in watchdogs:
            watchdog.cancel()
        await asyncio.gather(*watchdogs, return_exceptions=True)
        self.manager._watchdogs.clear()


class Tries:
    """The attempts of one acquire, for its attempt_ns. Every attempt of
    Aioredlock._set_lock sends the same identifier, and a failed attempt
    leaves the keys it set (only the last failure deletes them, in the
    background): a majority may hold our value since an earlier attempt
    (one that set a majority too slowly, "Lock timeout", or whose answers
    were lost). So the attempt_ns is the start of the attempt during which
    the nodes that may hold our value first make a majority: each node whose
    set script answered, or did not answer (anything but the script's
    refusal, LockAcquiringError). Before that attempt's first command no
    majority held our value."""

    def __init__(self, nodes):
        self.quorum = nodes // 2 + 1  # aioredlock.redis.Redis.set_lock: int(n / 2) + 1
        self.start_ns = None  # when the current attempt began
        self.may_hold = set()  # indexes of the nodes that may hold our value
        self.attempt_ns = None

    def node_may_hold(self, index):
        self.may_hold.add(index)
        if self.attempt_ns is None and len(self.may_hold) >= self.quorum:
            self.attempt_ns = self.start_ns


TRYING = {}  # lock identifier -> its Tries, while its acquire runs


def watch_tries(manager):
    """Wraps the library's attempt (Redis.set_lock: the set script on every
    node at once, asyncio.gather) to note when it began, and each node's
    part (Instance.set_lock) to note what it answered, for the identifier of
    an acquire in TRYING (the watchdog's and the lab's extends run the same
    code for identifiers no longer there)."""
    redis = manager.redis
    attempt = redis.set_lock

    async def attempting(resource, lock_identifier, lock_timeout=10.0):
        tries = TRYING.get(lock_identifier)
        if tries is not None:
            tries.start_ns = time.monotonic_ns()  # before any node's command
        return await attempt(resource, lock_identifier, lock_timeout)

    redis.set_lock = attempting
    for index, instance in enumerate(redis.instances):
        instance.set_lock = on_node(index, instance.set_lock)


def on_node(index, set_lock):
    async def setting(resource, lock_identifier, lock_timeout, register_scripts=False):
        tries = TRYING.get(lock_identifier)
        if tries is None or register_scripts:
            # Not an acquire's, or the library's own second try after
            # NOSCRIPT within a call already watched.
            return await set_lock(resource, lock_identifier, lock_timeout, register_scripts)
        try:
            result = await set_lock(resource, lock_identifier, lock_timeout)
        except LockAcquiringError:
            raise  # the script's error reply (another's key): nothing set
        except BaseException:
            tries.node_may_hold(index)  # no answer: it may have run
            raise
        tries.node_may_hold(index)
        return result
    return setting


def reading(task):
    """An aioredis connection's reader, which ends when its pool closes."""
    return getattr(task.get_coro(), "__qualname__", "") == "RedisConnection._read_data"


class Adapter:
    """One run's Aioredlock and locks, on that run's endpoints
    (protocol.run_async builds one per run)."""

    def __init__(self, endpoints):
        self.endpoints = endpoints
        self.manager = None
        self.watchdogs = None
        self.held = {}  # owner -> the Lock acquired here (one per acquisition)

    async def connect(self):
        """One Aioredlock over the run's endpoints, given as aioredlock's
        connection dicts (host, port, and aioredis' create_redis_pool options:
        a 0.5 s connect timeout, the target's password; aioredis 1.x has no
        ACL user): the library opens one pool per node on first use, and a
        node it cannot reach fails only that node's part of a quorum."""
        if self.manager is None:
            password = protocol.connection_options()["password"]
            connections = []
            for host, port in self.endpoints:
                connection = {"host": host, "port": port, "timeout": 0.5}
                if password:
                    connection["password"] = password
                connections.append(connection)
            self.manager = Aioredlock(redis_connections=connections)
            watch_tries(self.manager)
            if WATCHDOG:
                self.watchdogs = Watchdogs(self.manager)
        return self.manager

    async def op_connect(self, request):
        """Opens each node's pool and loads the library's scripts now."""
        manager = await self.connect()
        results = await asyncio.gather(*[asyncio.wait_for(i.connect(), DEADLINE_S)
                                         for i in manager.redis.instances], return_exceptions=True)
        errors = ["%s: %s" % (type(r).__name__, r) for r in results if isinstance(r, BaseException)]
        if len(errors) > len(results) // 2:
            return {"ok": False, "error": "; ".join(errors)}
        return {"ok": True}

    async def acquire(self, request):
        manager = await self.connect()
        ttl = request["ttl_ms"] / 1000.0
        # retry_count: one attempt for wait_ms 0, else as many as the
        # library's mean delay (uniform 0.1-0.3 s) fits in wait_ms.
        manager.retry_count = 1 + request["wait_ms"] // 200
        # The identifier the library would draw (str(uuid.uuid4())), given
        # here so that its attempts can be told from the watchdog's.
        identifier = str(uuid.uuid4())
        tries = TRYING[identifier] = Tries(len(manager.redis.instances))
        try:
            if WATCHDOG:
                # The lease is internal_lock_timeout, renewed every 0.6 of it.
                manager.internal_lock_timeout = ttl
                lock = await manager.lock(request["lock"], lock_timeout=None,
                                          lock_identifier=identifier)
            else:
                lock = await manager.lock(request["lock"], lock_timeout=ttl,
                                          lock_identifier=identifier)
        finally:
            TRYING.pop(identifier, None)
        self.held[lock.id] = lock
        if WATCHDOG:
            return {"ok": True, "owner": lock.id, "validity_ms": None,
                    "attempt_ns": tries.attempt_ns}
        # aioredlock checked that lease - elapsed - drift was positive and
        # tells its user nothing more (lock.valid): the lab's default.
        return {"ok": True, "owner": lock.id, "attempt_ns": tries.attempt_ns}

    def lock_of(self, request):
        lock = self.held.get(request["owner"])
        if lock is None:
            lock = Lock(self.manager, request["lock"], request["owner"],
                        request.get("ttl_ms", 10000) / 1000.0, valid=True)
        return lock

    async def release(self, request):
        manager = await self.connect()
        lock = self.lock_of(request)
        if lock is self.held.get(request["owner"]):
            await manager.unlock(lock)
        else:
            # Another process's owner: the unlock script alone (unlock()
            # would also stop the watchdog of this process's lock of the
            # same name: its watchdogs are kept by resource name).
            await manager.redis.unset_lock(lock.resource, lock.id)
        self.held.pop(request["owner"], None)
        return {"ok": True}

    async def extend(self, request):
        manager = await self.connect()
        lock = self.lock_of(request)
        await manager.extend(lock, lock_timeout=request["ttl_ms"] / 1000.0)
        return {"ok": True}

    async def held_op(self, request):
        if not WATCHDOG:
            return {"ok": False, "error": "no watchdog (lock_timeout given)"}
        lock = self.held.get(request["owner"])
        return {"ok": True, "held": bool(lock is not None and lock.valid)}

    async def handle(self, request):
        op = request.get("op")
        if op == "hello":
            return protocol.hello("aioredlock-watchdog" if WATCHDOG else "aioredlock",
                                  protocol.version_of("aioredlock"), multi_node=True,
                                  renews=WATCHDOG, renewals=WATCHDOG, connect=True,
                                  incidents=True)
        handler = {"acquire": self.acquire, "release": self.release, "extend": self.extend,
                   "held": self.held_op, "connect": self.op_connect}.get(op)
        if handler is None:
            return protocol.unknown_op(op)
        if op in ("held", "connect"):
            return await handler(request)
        # The wait plus 2 s, under the lab's reply timeout (10 s + wait_ms).
        deadline = DEADLINE_S + request.get("wait_ms", 0) / 1000.0
        LOGGED.take()
        try:
            return await asyncio.wait_for(handler(request), deadline)
        except asyncio.TimeoutError:
            return {"ok": False, "unknown": True,
                    "error": "no answer within %.1f s (asyncio.wait_for): aioredis has no read timeout" % deadline}
        except (LockError, RuntimeError, OSError, aioredis.errors.RedisError) as error:
            # A node it could not connect to (refused, or aioredis' connect
            # timeout: it has no other) got nothing; any other error logged
            # for a node may have hit after its command was written.
            logged = [(m, e) for m, e in LOGGED.take() if not NOT_CONNECTED.search(m)]
            message = "%s: %s" % (type(error).__name__, error)
            if logged or not isinstance(error, LockError):
                # A node's connection failed (or the quorum fell short with
                # an error logged): a command may have run there.
                return {"ok": False, "unknown": True,
                        "error": message + ("; " + logged[0][0] if logged else "")}
            if type(error) is LockAcquiringError or op != "acquire":
                return {"ok": False, "error": message}
            # "Lock timeout": the key was set on a majority too late; the
            # library deletes it in the background.
            return {"ok": False, "unknown": True, "error": message}

    async def close(self):
        """The run is over: the keys held stay (Aioredlock.destroy() would
        release them). The watchdogs stop (Watchdogs.stop), what the library
        still runs in the background ends (a failed acquire's cleanup:
        Aioredlock._set_lock), then each node's pool closes."""
        self.held.clear()
        if self.manager is None:
            return
        if self.watchdogs is not None:
            await self.watchdogs.stop()
        left = await protocol.tasks_left(DEADLINE_S, ignore=reading)
        if left:
            raise RuntimeError("aioredlock's tasks still running: %r" % left)
        await self.manager.redis.clear_connections()
        LOGGED.take()


async def main():
    protocol.watch_incidents()
    protocol.watch_loop(asyncio.get_running_loop())
    await protocol.run_async(Adapter, ARGS.redis)


if __name__ == "__main__":
    asyncio.run(main())
