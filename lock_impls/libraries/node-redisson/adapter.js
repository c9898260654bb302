'use strict';
// locklab adapter for node-redisson 1.0.4: Redisson's re-entrant hash lock
// with its watchdog, on one Redis node (the first --redis endpoint). See
// README.md.
const { Redisson } = require('node-redisson');
const { RedissonBaseLock } = require('node-redisson/dist/locks/RedissonBaseLock');
const { run, hello, versionOf, renewed, monotonicNs } = require('../protocol');
const { CLIENT_OPTIONS, whenReady, connected, disconnect, outcomeOf } = require('../clients');

// The installed library's version, for hello.
const VERSION = versionOf('node-redisson');

// The adapter of one run: the library on the first of `endpoints` (protocol.js `run`).
function adapter(endpoints) {
  const [{ host, port }] = endpoints;

  // node-redisson makes its own two ioredis clients (commands, and pub/sub for
  // unlock messages) from `redis.options`: the same options as every adapter
  // here (../clients.js). Everything else is the library's default
  // (eventAdapter 'pubsub'), except lockWatchdogTimeout: the lease the lab asks
  // for (ttl_ms) is what Redisson calls the watchdog timeout, the lease a lock
  // taken without a leaseTime gets and the watchdog renews every third of.
  // It is a setting of the Redisson object, so there is one per ttl_ms.
  const redissons = new Map();
  function redissonFor(ttl) {
    if (!redissons.has(ttl)) {
      const redisson = new Redisson({
        redis: {
          options: {
            host,
            port,
            ...CLIENT_OPTIONS,
            username: process.env.LOCKLAB_REDIS_USERNAME || undefined,
            password: process.env.LOCKLAB_REDIS_PASSWORD || undefined,
          },
        },
        lockWatchdogTimeout: BigInt(ttl),
      });
      for (const client of [redisson.redis, redisson.commandExecutor.subscribeRedis])
        client.on('error', (error) => console.error(`redis: ${error.message}`));
      reportRenewals(redisson.redis);
      redissons.set(ttl, {
        redisson,
        ready: whenReady([redisson.redis, redisson.commandExecutor.subscribeRedis]),
      });
    }
    return redissons.get(ttl);
  }

  // The watchdog's renewals. Each one is a call of the command client's
  // rRenewExpiration(lock name, internalLockLeaseTime, "<Redisson id>:<clientId>")
  // (dist/locks/RedissonBaseLock.js line 71), the script that PEXPIREs the key
  // when the owner's field is in it and answers 1, else 0
  // (dist/executor/CommandExecutor.js lines 43-50); ioredis defines it on the
  // client (`scripts` option), so wrapping the client's method sees every
  // renewal, whichever lock object made it. Each is reported (protocol.js
  // `renewed`): sent_ns read before the call sends the script, answered_ns
  // once its reply or error is in. ok: it answered 1; unknown: its reply was
  // lost (a timeout, a connection dropped with it in flight: it may have run);
  // else refused (it answered 0, Redis refused it, or it was never written).
  // The library does nothing else that moves the key's expiry of a hold
  // without re-entry (its re-entrant acquire and nested unlock also PEXPIRE).
  function reportRenewals(client) {
    const renew = client.rRenewExpiration;
    client.rRenewExpiration = function (lock, leaseTime, owner, ...rest) {
      const sentNs = monotonicNs();
      const promise = renew.call(this, lock, leaseTime, owner, ...rest);
      const report = (ok, unknown) =>
        renewed({ lock, owner, ttlMs: Number(leaseTime), sentNs, answeredNs: monotonicNs(), ok, unknown });
      // Reported before the library sees the answer (attached first); the
      // library's own await handles the error.
      promise.then(
        (reply) => report(Number(reply) === 1, false),
        (error) => report(false, outcomeOf(error).unknown === true),
      );
      return promise;
    };
  }

  // Locks acquired here, by owner: the hash field "<Redisson id>:<clientId>"
  // the library stored.
  const held = new Map();

  // The library's lock object for another owner: getLock with the owner's
  // clientId, on an executor that answers the owner's Redisson id.
  function lockOf(request) {
    if (held.has(request.owner)) return held.get(request.owner);
    const colon = request.owner.indexOf(':');
    const { redisson } = redissons.values().next().value || redissonFor(30000);
    const executor = Object.create(redisson.commandExecutor, { id: { value: request.owner.slice(0, colon) } });
    return Redisson.prototype.getLock.call({ commandExecutor: executor }, request.lock, request.owner.slice(colon + 1));
  }

  async function acquire(request) {
    const { redisson, ready } = redissonFor(request.ttl_ms);
    await ready;
    // getLock without a clientId: a new random one, so each acquire is a new
    // owner (the lab asks for no re-entry; see README.md).
    const lock = redisson.getLock(request.lock);
    try {
      // leaseTime true: no lease of its own, the watchdog renews it.
      if (!(await lock.tryLock(request.wait_ms, true))) return { ok: false, error: 'held by another client' };
    } catch (error) {
      return outcomeOf(error);
    }
    const owner = lock.getClientName(lock.clientId);
    held.set(owner, lock);
    // Renewed by the watchdog until unlock: no deadline of its own.
    return { ok: true, owner, validity_ms: null };
  }

  async function release(request) {
    const lock = lockOf(request);
    held.delete(request.owner);
    try {
      await lock.unlock();
      return { ok: true };
    } catch (error) {
      // Thrown when the unlock script found no field of ours (nothing changed).
      if (error.constructor.name === 'RedissonLockError') return { ok: false, error: `not held: ${error.message.split('\n')[0]}` };
      return outcomeOf(error);
    }
  }

  async function extend() {
    return { ok: false, error: 'unsupported: node-redisson has no extend (its watchdog renews the lease)' };
  }

  // "renews" (the watchdog) with every renewal reported (above), but `held`
  // cannot be answered: node-redisson tells its user nothing about its
  // renewals. Its public lock API is tryLock/lock/unlock/forceUnlock/isLocked;
  // isLocked() is an EXISTS on the key (anyone's hold counts), and a failed
  // renewal is only console.error'd (a refused one silently drops the renewal
  // entry from a private static map). See README.md.
  async function cannotTell() {
    return { ok: false, error: 'cannot tell: node-redisson tells its user nothing about its renewals' };
  }

  // The client of the story's lease (its lockWatchdogTimeout), built and
  // connected before the story's clock starts.
  function connect(request) {
    if (!request.ttl_ms) return { ok: true };
    const { redisson } = redissonFor(request.ttl_ms);
    return connected([redisson.redis, redisson.commandExecutor.subscribeRedis]);
  }

  // Every client of every Redisson built for the run, and the watchdog's
  // entries: node-redisson keeps them in a map shared by all its instances
  // (RedissonBaseLock.EXPIRATION_RENEWAL_MAP, dist/locks/RedissonBaseLock.js
  // line 107), where a lock of the run would otherwise stay "renewing" after
  // its timer is cleared.
  function close() {
    RedissonBaseLock.EXPIRATION_RENEWAL_MAP.clear();
    const clients = [...redissons.values()].flatMap(({ redisson }) => [
      redisson.redis,
      redisson.commandExecutor.subscribeRedis,
    ]);
    return disconnect(clients);
  }

  return {
    hello: hello({ name: 'node-redisson', version: VERSION, renews: true, renewals: true }),
    connect,
    close,
    acquire,
    release,
    extend,
    held: cannotTell,
  };
}

run(adapter);
