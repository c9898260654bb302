'use strict';
// locklab adapter for redis-semaphore 5.8.0's RedlockMutex: SET NX PX on
// every --redis endpoint, a majority wins, refreshed in the background. See
// README.md. Options, sharing a lock between processes and `held` are
// ../redis-semaphore.js (shared with Mutex): the library's defaults but
// lockTimeout = ttl_ms, acquireTimeout = wait_ms (one attempt for 0),
// onLockLost logged.
const { RedlockMutex } = require('redis-semaphore');
const { run, hello, versionOf } = require('../protocol');
const { tapped, connection, lost, failedAcquire, describe, firstOfLastAttemptNs } = require('../clients');
const { redisSemaphore, isScript, LOST_AT_REFRESH } = require('../redis-semaphore');

// The installed library's version, for hello.
const VERSION = versionOf('redis-semaphore');

// The adapter of one run: the library on `endpoints` (protocol.js `run`).
function adapter(endpoints) {
  const { clients, tap, ready } = tapped(endpoints);
  // As lib/utils/redlock.js getQuorum.
  const QUORUM = Math.round((clients.length + 1) / 2);
  const family = redisSemaphore(RedlockMutex, clients);

  // SET key identifier PX ttl NX; the delete script [script, 1, key,
  // identifier]; the refresh script [script, 1, key, identifier, timeout].
  function classify(record) {
    if (record.name === 'set') return { lock: true, value: record.args[1], set: (reply) => reply === 'OK' };
    if (isScript(record, 4)) return { unlock: true, value: record.args[3] };
    return null;
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
    const mutex = family.create(request);
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
      family.mutexes.set(mutex.identifier, mutex);
      // Refreshed in the background until release: no deadline of its own.
      // A failed attempt deletes its identifier on every node before the next.
      const attempt = firstOfLastAttemptNs(records, classify, mutex.identifier);
      return { ok: true, owner: mutex.identifier, validity_ms: null, attempt_ns: attempt };
    }
    // Each failed attempt ran the delete script on every node and waited for
    // all of them: a key can remain only where that reply was lost.
    return failedAcquire(records, classify, clients.length, (last) => `no quorum of ${QUORUM} within the wait (last: ${last})`);
  }

  async function release(request) {
    await ready;
    const mutex = family.take(request);
    const records = tap.record();
    try {
      // Returns nothing; a node's error counts as 0 (lib/redlockMutex/release.js).
      await mutex.release();
    } finally {
      tap.stop();
    }
    if (!records.length) return { ok: false, error: LOST_AT_REFRESH };
    return tally(records, 4, 'deleted');
  }

  // As the Mutex: a second RedlockMutex with the owner's identifier and
  // acquiredExternally runs the refresh with the new lockTimeout. When fewer
  // than a quorum refresh, the library deletes the key on every node
  // (lib/redlockMutex/refresh.js lines 41-44).
  async function extend(request) {
    await ready;
    const mutex = family.shared(request, { lockTimeout: request.ttl_ms });
    const records = tap.record();
    let refreshed;
    try {
      refreshed = await mutex.tryAcquire();
    } finally {
      tap.stop();
    }
    if (refreshed) return family.extended(request);
    const result = tally(records, 5, 'refreshed');
    const deleted = records.some((record) => isScript(record, 4) && (lost(record) || +record.reply === 1));
    if (deleted) return { ok: false, unknown: true, error: `${result.error}; then the library deleted the key` };
    return result.ok ? { ok: false, unknown: true, error: 'refresh reported failure' } : result;
  }

  return {
    hello: hello({ name: 'redis-semaphore-redlock-mutex', version: VERSION, steps: ['after-send'], renews: true, renewals: true }),
    ...connection(clients),
    acquire,
    release,
    extend,
    // isAcquired. A node's error counts as a refusal
    // (lib/redlockMutex/refresh.js `.catch(() => 0)`): fewer than a quorum
    // refreshed is a loss.
    held: family.held,
  };
}

run(adapter);
