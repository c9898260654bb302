'use strict';
// locklab adapter for redis-semaphore 5.8.0's Mutex: SET NX PX on one Redis
// node (the first --redis endpoint), refreshed in the background. See README.md.
const { Mutex } = require('redis-semaphore');
const { run, hello, endpointsFrom, versionOf } = require('../protocol');
const { tapped, outcomeOf } = require('../clients');

// The installed library's version, for hello.
const VERSION = versionOf('redis-semaphore');

const { clients, tap, ready } = tapped(endpointsFrom(process.argv).slice(0, 1));
const [client] = clients;

// Options: the library's defaults (README "new Mutex(redisClient, key [, {
// ... }])", lib/misc.js) but for what the lab asks: lockTimeout = ttl_ms and
// acquireTimeout = wait_ms. Defaults kept: retryInterval 10 ms,
// acquireAttemptsLimit Infinity, refreshInterval = 0.8 * lockTimeout.
// acquireTimeout 0 would make no attempt at all (lib/mutex/acquire.js:
// `while (Date.now() < end && ...)`), so a wait of 0 is one attempt, as the
// README's "Example with optional lock" does (acquireAttemptsLimit: 1).
// onLockLost as the README's "Example with lost lock handling": log it (the
// default throws an unhandled LostLockError).
function optionsFor(request) {
  return {
    lockTimeout: request.ttl_ms,
    ...(request.wait_ms > 0 ? { acquireTimeout: request.wait_ms } : { acquireAttemptsLimit: 1 }),
    onLockLost: (error) => console.error(`${new Date().toISOString()} onLockLost: ${error.message}`),
  };
}

// The delete script's arguments are [script, 1, key, identifier]; the
// refresh script's have the lock timeout too.
const isDelete = (record) => (record.name === 'evalsha' || record.name === 'eval') && record.args.length === 4;

// Mutexes acquired here, by owner (the identifier the library stored).
const heldMutexes = new Map();

// Another process's lock: the README's "lock sharing between processes"
// (identifier + acquiredExternally), with no refresh of its own.
function shared(request, options = {}) {
  return new Mutex(client, request.lock, {
    identifier: request.owner,
    acquiredExternally: true,
    refreshInterval: 0,
    ...options,
  });
}

async function acquire(request) {
  await ready;
  const mutex = new Mutex(client, request.lock, optionsFor(request));
  try {
    if (!(await mutex.tryAcquire())) return { ok: false, error: 'held by another client (every SET NX got nil)' };
  } catch (error) {
    return outcomeOf(error);
  }
  heldMutexes.set(mutex.identifier, mutex);
  // The lease is refreshed in the background until release: no deadline of
  // its own. The library tells a loss only through onLockLost / isAcquired.
  return { ok: true, owner: mutex.identifier, validity_ms: null };
}

async function release(request) {
  await ready;
  const mutex = heldMutexes.get(request.owner) || shared(request);
  heldMutexes.delete(request.owner);
  const records = tap.record();
  try {
    await mutex.release();
  } catch (error) {
    return outcomeOf(error);
  } finally {
    tap.stop();
  }
  // release() returns nothing either way; what its delete script answered
  // tells whether the key was still ours.
  if (!records.length) return { ok: false, error: 'not held: the lock was lost at a refresh (onLockLost); release() sent nothing' };
  const answer = records.filter(isDelete).pop();
  if (answer && answer.state === 'reply' && +answer.reply === 1) return { ok: true };
  return { ok: false, error: 'not held: the delete script found another value (release() itself reports nothing)' };
}

// The README's "Example with dynamically adjusting existing lock": a second
// Mutex with the owner's identifier and acquiredExternally runs the refresh
// script (compare-and-pexpire) with the new lockTimeout. The original
// Mutex keeps refreshing with its own lockTimeout.
async function extend(request) {
  await ready;
  const mutex = shared(request, { lockTimeout: request.ttl_ms });
  try {
    if (!(await mutex.tryAcquire())) return { ok: false, error: 'not held' };
  } catch (error) {
    return outcomeOf(error);
  }
  return heldMutexes.has(request.owner) ? { ok: true, validity_ms: null } : { ok: true };
}

// What the library believes of a lease it refreshes: `isAcquired` (README
// "Example with lost lock handling"), false once a refresh found the key gone
// or someone else's (lib/Lock.js `_processRefresh`: `_acquired = false`, then
// onLockLost). The refresh runs every 0.8 × lockTimeout; until it has run
// (after a pause, the overdue timer runs first thing), the library still
// says held. A refresh that fails with an error (a timeout, a lost
// connection) is not a loss: `_processRefresh` rejects (logged as an
// unhandled rejection) and `_acquired` stays true.
async function held(request) {
  const mutex = heldMutexes.get(request.owner);
  if (!mutex) return { ok: false, error: 'cannot tell: no lock of this owner is held in this process' };
  return { ok: true, held: mutex.isAcquired };
}

run({
  hello: hello({ name: 'redis-semaphore-mutex', version: VERSION, renews: true }),
  acquire,
  release,
  extend,
  held,
});
