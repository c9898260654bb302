'use strict';
// locklab adapter for redis-semaphore 5.8.0's RedlockMutex: SET NX PX on
// every --redis endpoint, a majority wins, refreshed in the background. See
// README.md.
const { RedlockMutex } = require('redis-semaphore');
const { run, hello, endpointsFrom, versionOf } = require('../protocol');
const { tapped, lost, failedAcquire, describe } = require('../clients');

// The installed library's version, for hello.
const VERSION = versionOf('redis-semaphore');

const { clients, tap, ready } = tapped(endpointsFrom(process.argv));
// As lib/utils/redlock.js getQuorum.
const QUORUM = Math.round((clients.length + 1) / 2);

// Options: the library's defaults (README "new RedlockMutex(redisClients,
// key [, { ... }])", lib/misc.js) but for what the lab asks: lockTimeout =
// ttl_ms and acquireTimeout = wait_ms. Defaults kept: retryInterval 10 ms,
// acquireAttemptsLimit Infinity, refreshInterval = 0.8 * lockTimeout. A wait
// of 0 is one attempt (acquireAttemptsLimit: 1; acquireTimeout 0 would make
// none). onLockLost logs, as the README's "Example with lost lock handling".
function optionsFor(request) {
  return {
    lockTimeout: request.ttl_ms,
    ...(request.wait_ms > 0 ? { acquireTimeout: request.wait_ms } : { acquireAttemptsLimit: 1 }),
    onLockLost: (error) => console.error(`${new Date().toISOString()} onLockLost: ${error.message}`),
  };
}

// SET key identifier PX ttl NX; the delete script [script, 1, key,
// identifier]; the refresh script [script, 1, key, identifier, timeout].
function classify(record) {
  if (record.name === 'set') return { lock: true, value: record.args[1], set: (reply) => reply === 'OK' };
  if ((record.name === 'evalsha' || record.name === 'eval') && record.args.length === 4)
    return { unlock: true, value: record.args[3] };
  return null;
}
const isScript = (record, length) =>
  (record.name === 'evalsha' || record.name === 'eval') && record.args.length === length;

// Mutexes acquired here, by owner (the identifier the library stored).
const heldMutexes = new Map();

// Another process's lock: identifier + acquiredExternally (README "lock
// sharing between processes"), with no refresh of its own.
function shared(request, options = {}) {
  return new RedlockMutex(clients, request.lock, {
    identifier: request.owner,
    acquiredExternally: true,
    refreshInterval: 0,
    ...options,
  });
}

// What a script run on every node did, when the library does not say:
// done on a quorum, definitely not anywhere, or unknown.
function tally(records, length, label) {
  const runs = records.filter((record) => isScript(record, length) && record.state !== 'refused');
  const applied = runs.filter((record) => record.state === 'reply' && +record.reply === 1).length;
  const what = describe(runs, () => ({ label }));
  if (applied >= QUORUM) return { ok: true };
  if (!applied && !runs.some(lost)) return { ok: false, error: `not held: ${what}` };
  return { ok: false, unknown: true, error: `${label} on ${applied} of ${clients.length} nodes (quorum ${QUORUM}): ${what}` };
}

async function acquire(request, ctx) {
  await ready;
  const mutex = new RedlockMutex(clients, request.lock, optionsFor(request));
  const records = tap.record();
  tap.round = { match: (record) => record.name === 'set', announce: () => ctx.step('after-send') };
  let acquired;
  try {
    // Never throws for a node's error: each counts as 0 (lib/redlockMutex/acquire.js).
    acquired = await mutex.tryAcquire();
  } finally {
    tap.stop();
  }
  if (acquired) {
    heldMutexes.set(mutex.identifier, mutex);
    // Refreshed in the background until release: no deadline of its own.
    return { ok: true, owner: mutex.identifier, validity_ms: null };
  }
  // Each failed attempt ran the delete script on every node and waited for
  // all of them: a key can remain only where that reply was lost.
  return failedAcquire(records, classify, clients.length, (last) => `no quorum of ${QUORUM} within the wait (last: ${last})`);
}

async function release(request) {
  await ready;
  const mutex = heldMutexes.get(request.owner) || shared(request);
  heldMutexes.delete(request.owner);
  const records = tap.record();
  try {
    // Returns nothing; a node's error counts as 0 (lib/redlockMutex/release.js).
    await mutex.release();
  } finally {
    tap.stop();
  }
  if (!records.length) return { ok: false, error: 'not held: the lock was lost at a refresh (onLockLost); release() sent nothing' };
  return tally(records, 4, 'deleted');
}

// As the Mutex: a second RedlockMutex with the owner's identifier and
// acquiredExternally runs the refresh with the new lockTimeout. When fewer
// than a quorum refresh, the library deletes the key on every node
// (lib/redlockMutex/refresh.js lines 41-44).
async function extend(request) {
  await ready;
  const mutex = shared(request, { lockTimeout: request.ttl_ms });
  const records = tap.record();
  let refreshed;
  try {
    refreshed = await mutex.tryAcquire();
  } finally {
    tap.stop();
  }
  if (refreshed) return heldMutexes.has(request.owner) ? { ok: true, validity_ms: null } : { ok: true };
  const result = tally(records, 5, 'refreshed');
  const deleted = records.some((record) => isScript(record, 4) && (lost(record) || +record.reply === 1));
  if (deleted) return { ok: false, unknown: true, error: `${result.error}; then the library deleted the key` };
  return result.ok ? { ok: false, unknown: true, error: 'refresh reported failure' } : result;
}

// What the library believes of a lease it refreshes: `isAcquired` (README
// "Example with lost lock handling"), false once a refresh found the key gone
// or someone else's (lib/Lock.js `_processRefresh`: `_acquired = false`, then
// onLockLost). The refresh runs every 0.8 × lockTimeout; until it has run
// (after a pause, the overdue timer runs first thing), the library still
// says held. A node's error counts as a refusal (lib/redlockMutex/refresh.js
// `.catch(() => 0)`): fewer than a quorum refreshed is a loss.
async function held(request) {
  const mutex = heldMutexes.get(request.owner);
  if (!mutex) return { ok: false, error: 'cannot tell: no lock of this owner is held in this process' };
  return { ok: true, held: mutex.isAcquired };
}

run({
  hello: hello({ name: 'redis-semaphore-redlock-mutex', version: VERSION, steps: ['after-send'], renews: true }),
  acquire,
  release,
  extend,
  held,
});
