"""Measures the code-reading leads about these libraries on one Redis server
(no faults needed), printing what Redis holds after each step:

    python/.venv/bin/python python/probe_leads.py --redis 127.0.0.1:6379

1. sherlock RedisLock(expire=None): "the lock will not expire", or no lock?
2. sherlock RedisLock(expire=1.5): a key without a TTL and an exception?
3. python-redis-lock Lock(expire=1.5): the key's TTL (whole seconds?)
4. python-redis-lock acquire(timeout=0.5) on a held lock: how long it waits.
5. aioredlock extend() of a lock whose key expired: refused, or re-created?
6. aioredlock lock.valid after its key expired (#46).
"""
import asyncio
import time

import redis
import redis_lock
import sherlock

import common
from common import protocol

HOST, PORT = protocol.endpoints_of(protocol.arguments(__doc__.splitlines()[0]).redis)[0]
R = redis.StrictRedis(host=HOST, port=PORT, **protocol.connection_options())
sherlock.configure(backend=sherlock.backends.REDIS, client=R)


def show(what, key):
    print("   %s: exists=%s ttl=%s pttl=%s" % (what, R.exists(key), R.ttl(key), R.pttl(key)))


def sherlock_probes():
    R.delete("probe-none", "probe-frac")
    print("1. sherlock RedisLock('probe-none', expire=None).acquire()")
    lock = sherlock.RedisLock("probe-none", client=R, expire=None)
    print("   acquire ->", lock.acquire(blocking=False), " locked() ->", lock.locked())
    show("key probe-none", "probe-none")
    other = sherlock.RedisLock("probe-none", client=R, expire=None)
    print("   a second RedisLock's acquire ->", other.acquire(blocking=False))
    print("2. sherlock RedisLock('probe-frac', expire=1.5).acquire()")
    lock = sherlock.RedisLock("probe-frac", client=R, expire=1.5)
    try:
        print("   acquire ->", lock.acquire(blocking=False))
    except redis.exceptions.ResponseError as error:
        print("   acquire raised ResponseError:", error)
    show("key probe-frac", "probe-frac")
    other = sherlock.RedisLock("probe-frac", client=R, expire=1.5, timeout=3)
    start = time.monotonic()
    try:
        print("   a second RedisLock(timeout=3).acquire() ->", other.acquire())
    except sherlock.LockTimeoutException as error:
        print("   a second RedisLock(timeout=3).acquire() raised LockTimeoutException after %.1f s" % (time.monotonic() - start))
    show("key probe-frac, 3 s later", "probe-frac")
    R.delete("probe-none", "probe-frac")


def redis_lock_probes():
    R.delete("lock:probe-prl")
    print("3. python-redis-lock Lock(expire=1.5).acquire()")
    lock = redis_lock.Lock(R, "probe-prl", expire=1.5)
    print("   acquire ->", lock.acquire(blocking=False))
    show("key lock:probe-prl", "lock:probe-prl")
    lock.release()
    print("4. python-redis-lock acquire(timeout=0.5) while another Lock(expire=3) holds it")
    plain = redis.StrictRedis(host=HOST, port=PORT)  # redis-py's default: no socket timeout
    holder = redis_lock.Lock(plain, "probe-prl", expire=3)
    holder.acquire(blocking=False)
    waiter = redis_lock.Lock(plain, "probe-prl", expire=3)
    start = time.monotonic()
    print("   acquire ->", waiter.acquire(timeout=0.5), "after %.2f s" % (time.monotonic() - start),
          "(the holder never released: its key expired)")
    waiter.release()
    R.delete("lock:probe-prl")


async def aioredlock_probes():
    from aioredlock import Aioredlock
    R.delete("probe-aio")
    manager = Aioredlock([{"host": HOST, "port": PORT}])
    print("5. aioredlock lock('probe-aio', lock_timeout=1), 1.5 s wait, extend()")
    lock = await manager.lock("probe-aio", lock_timeout=1)
    await asyncio.sleep(1.5)
    show("key probe-aio after 1.5 s", "probe-aio")
    print("6.  lock.valid =", lock.valid)
    await manager.extend(lock)
    print("   extend() returned without error; lock.valid =", lock.valid)
    show("key probe-aio after extend()", "probe-aio")
    await manager.unlock(lock)
    await manager.destroy()


if __name__ == "__main__":
    sherlock_probes()
    redis_lock_probes()
    asyncio.run(aioredlock_probes())
