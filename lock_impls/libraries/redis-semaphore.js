'use strict';
const { renewed, monotonicNs } = require('./protocol');
// What the redis-semaphore adapters share: its Mutex (one node) and its
// RedlockMutex (every node) take the same options (lib/misc.js), share a
// lock between processes the same way and say alike whether they still hold
// it (lib/Lock.js). Each adapter.js maps acquire, release and extend, which
// differ: a node's error throws from a Mutex and counts as a refusal in a
// RedlockMutex.
//
//   const family = redisSemaphore(Mutex, client);  // or (RedlockMutex, clients)
//   family.create(request)                  // a new lock with optionsFor(request), its refreshes reported
//   family.shared(request, options)         // another process's lock, by its owner
//   family.mutexes                          // locks acquired here, by owner
//   family.take(request)                    // the lock a release is for
//   family.held                             // the `held` handler
//   family.extended(request)                // extend's answer once the refresh succeeded

// Options: the library's defaults (README "new Mutex(redisClient, key [, {
// ... }])" and "new RedlockMutex(redisClients, key [, { ... }])", lib/misc.js)
// but for what the lab asks: lockTimeout = ttl_ms and acquireTimeout =
// wait_ms. Defaults kept: retryInterval 10 ms, acquireAttemptsLimit Infinity,
// refreshInterval = 0.8 * lockTimeout. acquireTimeout 0 would make no attempt
// at all (lib/mutex/acquire.js: `while (Date.now() < end && ...)`), so a wait
// of 0 is one attempt, as the README's "Example with optional lock" does
// (acquireAttemptsLimit: 1). onLockLost as the README's "Example with lost
// lock handling": log it (the default throws an unhandled LostLockError).
function optionsFor(request) {
  return {
    lockTimeout: request.ttl_ms,
    ...(request.wait_ms > 0 ? { acquireTimeout: request.wait_ms } : { acquireAttemptsLimit: 1 }),
    onLockLost: (error) => console.error(`${new Date().toISOString()} onLockLost: ${error.message}`),
  };
}

// A script the library runs, by its arguments: the delete script's are
// [script, 1, key, identifier] (4), the refresh script's have the lock
// timeout too (5).
const isScript = (record, length) =>
  (record.name === 'evalsha' || record.name === 'eval') && record.args.length === length;

// release() sent nothing: a refresh had already found the lock lost.
const LOST_AT_REFRESH = 'not held: the lock was lost at a refresh (onLockLost); release() sent nothing';

// Every refresh of `mutex`'s lease to the lab (protocol.js renewed): its
// timer (`_processRefresh`) calls the instance's `_refresh`, wrapped here;
// a lock acquired here calls it for nothing else. A refresh that throws may
// have reached Redis: unknown.
function reportRefreshes(mutex, request) {
  const refresh = mutex._refresh.bind(mutex);
  mutex._refresh = async () => {
    const sentNs = monotonicNs();
    const report = (ok, unknown) =>
      renewed({
        lock: request.lock,
        owner: mutex.identifier,
        ttlMs: request.ttl_ms,
        sentNs,
        answeredNs: monotonicNs(),
        ok,
        unknown,
      });
    let refreshed;
    try {
      refreshed = await refresh();
    } catch (error) {
      report(false, true);
      throw error;
    }
    report(refreshed, false);
    return refreshed;
  };
  return mutex;
}

function redisSemaphore(Kind, redis) {
  // Locks acquired here, by owner (the identifier the library stored).
  const mutexes = new Map();

  // What the library believes of a lease it refreshes: `isAcquired` (README
  // "Example with lost lock handling"), false once a refresh found the key
  // gone or someone else's (lib/Lock.js `_processRefresh`: `_acquired =
  // false`, then onLockLost). The refresh runs every 0.8 × lockTimeout;
  // until it has run (after a pause, the overdue timer runs first thing), the
  // library still says held. Each adapter.js says what a refresh that fails
  // with an error means.
  async function held(request) {
    const mutex = mutexes.get(request.owner);
    if (!mutex) return { ok: false, error: 'cannot tell: no lock of this owner is held in this process' };
    return { ok: true, held: mutex.isAcquired };
  }

  // Another process's lock: identifier + acquiredExternally (README "lock
  // sharing between processes"), with no refresh of its own.
  function shared(request, options = {}) {
    return new Kind(redis, request.lock, {
      identifier: request.owner,
      acquiredExternally: true,
      refreshInterval: 0,
      ...options,
    });
  }

  return {
    mutexes,
    held,
    shared,
    create: (request) => reportRefreshes(new Kind(redis, request.lock, optionsFor(request)), request),
    // The lock a release is for: the one acquired here (forgotten now), or
    // another process's.
    take(request) {
      const mutex = mutexes.get(request.owner) || shared(request);
      mutexes.delete(request.owner);
      return mutex;
    },
    // The lock acquired here keeps refreshing (no deadline of its own);
    // another process's gets the lab's default.
    extended: (request) => (mutexes.has(request.owner) ? { ok: true, validity_ms: null } : { ok: true }),
  };
}

module.exports = { redisSemaphore, isScript, LOST_AT_REFRESH };
