'use strict';
// locklab adapter for node-redlock 4.2.0 (npm "redlock", installed as the
// alias "redlock-v4"): Redlock over every --redis endpoint. See README.md.
const Redlock = require('redlock-v4');
const { run, hello, versionOf } = require('../protocol');
const { tapped, connection, outcomeOf, lost, settled, failedAcquire, describe, firstOfLastAttemptNs } = require('../clients');

// The installed library's version, for hello.
const VERSION = versionOf('redlock-v4');

// The adapter of one run: the library on `endpoints` (protocol.js `run`).
function adapter(endpoints) {
  const { clients, tap, ready } = tapped(endpoints);

  // The library's default retryDelay (redlock.js `defaults`; README
  // "Configuration"). A wait of wait_ms allows floor(wait_ms / 200) retries.
  const RETRY_DELAY = 200;

  // Redlock objects by retryCount, each otherwise with the library's defaults
  // (driftFactor 0.01, retryDelay 200, retryJitter 100). One object per count
  // because lockWithOptions reads `options.retryCount || self.retryCount`: a
  // retryCount of 0 given per call means the default 10.
  const redlocks = new Map();
  function redlockWith(retryCount) {
    if (!redlocks.has(retryCount)) redlocks.set(retryCount, new Redlock(clients, { retryCount }));
    return redlocks.get(retryCount);
  }
  const defaults = redlockWith(10);
  const LOCK = defaults.scripts.lockScript.hash;
  const UNLOCK = defaults.scripts.unlockScript.hash;
  const EXTEND = defaults.scripts.extendScript.hash;

  // The scripts' arguments, evalsha or eval: [script, 1, key, value, ttl?].
  function classify(record) {
    if (record.sha === LOCK) return { lock: true, value: record.args[3], set: (reply) => +reply === 1 };
    if (record.sha === UNLOCK) return { unlock: true, value: record.args[3] };
    return null;
  }

  // Locks acquired here, by owner (the random value node-redlock stored).
  const held = new Map();

  // The library's Lock for `owner`: the one acquired here, or one built from
  // the owner value alone (all release needs; extend also checks `expiration`,
  // unknown for another process's lock, so it is not limited here).
  function lockOf(request) {
    return held.get(request.owner) || new Redlock.Lock(defaults, request.lock, request.owner, Infinity);
  }

  async function acquire(request, ctx) {
    await ready;
    const start = Date.now();
    const redlock = redlockWith(Math.floor(request.wait_ms / RETRY_DELAY));
    const records = tap.record();
    tap.round = { match: (record) => record.name === 'evalsha' && record.sha === LOCK, announce: () => ctx.step('after-send') };
    let lock;
    try {
      lock = await redlock.lock(request.lock, request.ttl_ms);
    } catch (error) {
      tap.round = null;
      if (!(error instanceof Redlock.LockError)) return outcomeOf(error);
      // Every attempt that failed ran the unlock script on every node and
      // waited for it: a key can remain only where that unlock's reply was lost.
      return failedAcquire(records, classify, clients.length, (last) => `${error.message} (last: ${last})`);
    } finally {
      tap.stop();
    }
    // node-redlock resolves right after its check `votes >= quorum &&
    // lock.expiration > Date.now()` (redlock.js line 419).
    await ctx.step('after-validity-check');
    held.set(lock.value, lock);
    // lock.expiration = start of the successful attempt + ttl - drift. Every
    // failed attempt ran the unlock script on every node before the next.
    return {
      ok: true,
      owner: lock.value,
      validity_ms: Math.max(0, lock.expiration - start),
      attempt_ns: firstOfLastAttemptNs(records, classify, lock.value),
    };
  }

  async function release(request) {
    await ready;
    const lock = lockOf(request);
    held.delete(request.owner);
    const records = tap.record();
    try {
      await lock.redlock.unlock(lock);
      return { ok: true };
    } catch (error) {
      if (!(error instanceof Redlock.LockError)) return outcomeOf(error);
      // No quorum of nodes deleted the key. Definitely not done only if every
      // node answered and none deleted it.
      const unlocks = records.filter((record) => record.sha === UNLOCK);
      const deleted = unlocks.some((record) => record.state === 'reply' && +record.reply >= 1);
      const what = `${error.message} (${describe(unlocks, classify)})`;
      if (deleted || unlocks.some(lost)) return { ok: false, unknown: true, error: what };
      return { ok: false, error: `not held: ${what}` };
    } finally {
      tap.stop();
    }
  }

  async function extend(request) {
    await ready;
    const lock = lockOf(request);
    const start = Date.now();
    const records = tap.record();
    try {
      await lock.redlock.extend(lock, request.ttl_ms);
      return { ok: true, validity_ms: Math.max(0, lock.expiration - start) };
    } catch (error) {
      if (!(error instanceof Redlock.LockError)) return outcomeOf(error);
      if (!records.length) return { ok: false, error: error.message }; // "already expired": nothing sent
      // A failed extend attempt runs the unlock script (redlock.js line 424):
      // the lock may be gone even though the extend failed.
      await settled(records);
      const touched = records.some(
        (record) =>
          (record.sha === UNLOCK || record.sha === EXTEND) &&
          (lost(record) || (record.state === 'reply' && +record.reply >= 1)),
      );
      const what = `${error.message}; after each failed attempt node-redlock ran its unlock script`;
      if (touched) return { ok: false, unknown: true, error: what };
      return { ok: false, error: `not held: ${what}` };
    } finally {
      tap.stop();
    }
  }

  return {
    hello: hello({ name: 'node-redlock-v4', version: VERSION, steps: ['after-send', 'after-validity-check'] }),
    ...connection(clients),
    acquire,
    release,
    extend,
  };
}

run(adapter);
