'use strict';
// locklab adapter for redis-semaphore 5.8.0's Mutex: SET NX PX on one Redis
// node (the first --redis endpoint), refreshed in the background. See
// README.md. Options, sharing a lock between processes and `held` are
// ../redis-semaphore.js (shared with RedlockMutex): the library's defaults
// but lockTimeout = ttl_ms, acquireTimeout = wait_ms (one attempt for 0),
// onLockLost logged.
const { Mutex } = require('redis-semaphore');
const { run, hello, versionOf } = require('../protocol');
const { tapped, connection, outcomeOf, winningSentNs } = require('../clients');
const { redisSemaphore, isScript, LOST_AT_REFRESH } = require('../redis-semaphore');

// The installed library's version, for hello.
const VERSION = versionOf('redis-semaphore');

// The adapter of one run: the library on `endpoints` (protocol.js `run`).
function adapter(endpoints) {
  const { clients, tap, ready } = tapped(endpoints.slice(0, 1));
  const [client] = clients;
  const family = redisSemaphore(Mutex, client);

  // acquireMutex's one command, SET key identifier PX ttl NX, tried every
  // retryInterval: the last that answered OK took the lock.
  function classify(record) {
    if (record.name === 'set') return { lock: true, value: record.args[1], set: (reply) => reply === 'OK' };
    return null;
  }

  async function acquire(request) {
    await ready;
    const mutex = family.create(request);
    const records = tap.record();
    try {
      if (!(await mutex.tryAcquire())) return { ok: false, error: 'held by another client (every SET NX got nil)' };
    } catch (error) {
      return outcomeOf(error);
    } finally {
      tap.stop();
    }
    family.mutexes.set(mutex.identifier, mutex);
    // The lease is refreshed in the background until release: no deadline of
    // its own. The library tells a loss only through onLockLost / isAcquired.
    return {
      ok: true,
      owner: mutex.identifier,
      validity_ms: null,
      attempt_ns: winningSentNs(records, classify, mutex.identifier),
    };
  }

  async function release(request) {
    await ready;
    const mutex = family.take(request);
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
    if (!records.length) return { ok: false, error: LOST_AT_REFRESH };
    const answer = records.filter((record) => isScript(record, 4)).pop();
    if (answer && answer.state === 'reply' && +answer.reply === 1) return { ok: true };
    return { ok: false, error: 'not held: the delete script found another value (release() itself reports nothing)' };
  }

  // The README's "Example with dynamically adjusting existing lock": a second
  // Mutex with the owner's identifier and acquiredExternally runs the refresh
  // script (compare-and-pexpire) with the new lockTimeout. The original
  // Mutex keeps refreshing with its own lockTimeout.
  async function extend(request) {
    await ready;
    const mutex = family.shared(request, { lockTimeout: request.ttl_ms });
    try {
      if (!(await mutex.tryAcquire())) return { ok: false, error: 'not held' };
    } catch (error) {
      return outcomeOf(error);
    }
    return family.extended(request);
  }

  return {
    hello: hello({ name: 'redis-semaphore-mutex', version: VERSION, renews: true, renewals: true }),
    ...connection(clients),
    acquire,
    release,
    extend,
    // isAcquired. A refresh that fails with an error (a timeout, a lost
    // connection) is not a loss: `_processRefresh` rejects (logged as an
    // unhandled rejection) and `_acquired` stays true.
    held: family.held,
  };
}

run(adapter);
