'use strict';
// locklab adapter for redlock-universal 0.8.5's RedLock (createRedlock) with
// its IoredisAdapter: SET NX PX on every --redis endpoint. See README.md.
const crypto = require('crypto');
const { createRedlock, IoredisAdapter, LockAcquisitionError, LUA_SCRIPTS } = require('redlock-universal');
const { run, hello, versionOf } = require('../protocol');
const { tapped, connection, outcomeOf, lost, failedAcquire, describe, firstOfLastAttemptNs } = require('../clients');

// The installed library's version, for hello.
const VERSION = versionOf('redlock-universal');

// The adapter of one run: the library on `endpoints` (protocol.js `run`).
function adapter(endpoints) {
  const { clients, tap, ready } = tapped(endpoints);
  // IoredisAdapter with its defaults (no key prefix; its own 5 s timeout per
  // command, which the client's 1 s command timeout beats).
  const adapters = clients.map((client) => new IoredisAdapter(client));

  // createRedlock with the library's defaults (README "Configuration",
  // CreateRedlockConfig; dist/index.cjs RedLock constructor): quorum
  // floor(n/2)+1, retryDelay 200 ms, clockDriftFactor 0.01. What the lab asks:
  // ttl = ttl_ms, and a wait of wait_ms allows floor(wait_ms / 200) retries
  // (retryAttempts; default 3).
  const RETRY_DELAY = 200;
  const redlockFor = (request, options = {}) => createRedlock({ adapters, key: request.lock, ...options });

  const sha1 = (text) => crypto.createHash('sha1').update(text).digest('hex');
  const DELETE = sha1(LUA_SCRIPTS.RELEASE);
  const EXTEND = sha1(LUA_SCRIPTS.EXTEND);

  // SET key value PX ttl NX; the delete script [sha, 1, key, value].
  function classify(record) {
    if (record.name === 'set') return { lock: true, value: record.args[1], set: (reply) => reply === 'OK' };
    if (record.sha === DELETE) return { unlock: true, value: record.args[3] };
    return null;
  }

  // A script run on every node (the library turns its errors into false):
  // definitely not done only if every node answered and none applied it.
  function tally(records, sha, label) {
    const runs = records.filter((record) => record.sha === sha && record.state !== 'refused');
    const what = describe(runs, () => ({ label }));
    if (runs.some((record) => lost(record) || +record.reply === 1))
      return { ok: false, unknown: true, error: `no quorum: ${what}` };
    return { ok: false, error: `not held: ${what}` };
  }

  // Handles acquired here, by owner (the random value the library stored).
  const held = new Map();

  // The library's handle for `owner`: the one acquired here, or one rebuilt
  // from its fields (the README: "LockHandle is fully serializable").
  function handleOf(request) {
    return held.get(request.owner) || { id: 'from-another-process', key: request.lock, value: request.owner, acquiredAt: 0, ttl: 0 };
  }

  async function acquire(request, ctx) {
    await ready;
    const start = Date.now();
    const redlock = redlockFor(request, {
      ttl: request.ttl_ms,
      retryAttempts: Math.floor(request.wait_ms / RETRY_DELAY),
    });
    const records = tap.record();
    tap.round = { match: (record) => record.name === 'set', announce: () => ctx.step('after-send') };
    let handle;
    try {
      handle = await redlock.acquire();
    } catch (error) {
      tap.round = null;
      if (!(error instanceof LockAcquisitionError)) return outcomeOf(error);
      // A failed attempt deletes its value only on the nodes that answered OK
      // (releasePartialLocks); each attempt has a value of its own.
      return failedAcquire(records, classify, clients.length, (last) => `${error.message} (last: ${last})`);
    } finally {
      tap.stop();
    }
    // The attempt succeeded only with a quorum and elapsed + drift < ttl
    // (attemptLockAcquisition); acquire() then returns.
    await ctx.step('after-validity-check');
    held.set(handle.value, handle);
    // The library's own idea of the deadline is handle.acquiredAt + ttl, with
    // acquiredAt taken after the replies came (its using() and
    // cleanupExpiredLocks count from it), not at the start of the attempt.
    return {
      ok: true,
      owner: handle.value,
      validity_ms: handle.acquiredAt + handle.ttl - start,
      // Each attempt has a value of its own: the winning one's first SET.
      attempt_ns: firstOfLastAttemptNs(records, classify, handle.value),
    };
  }

  async function release(request) {
    await ready;
    const handle = handleOf(request);
    held.delete(request.owner);
    const records = tap.record();
    try {
      // true when a quorum of nodes deleted the key; a node's error is false.
      if (await redlockFor(request).release(handle)) return { ok: true };
    } catch (error) {
      return outcomeOf(error);
    } finally {
      tap.stop();
    }
    return tally(records, DELETE, 'deleted');
  }

  async function extend(request) {
    await ready;
    const start = Date.now();
    const records = tap.record();
    try {
      // GET on every node; with a quorum holding our value, the
      // compare-and-pexpire script on every node; true with a quorum of them.
      if (await redlockFor(request).extend(handleOf(request), request.ttl_ms)) {
        // As its using(): the new deadline is now + ttl.
        return { ok: true, validity_ms: Date.now() - start + request.ttl_ms };
      }
    } catch (error) {
      return outcomeOf(error);
    } finally {
      tap.stop();
    }
    if (!records.some((record) => record.sha === EXTEND)) return { ok: false, error: 'not held (no quorum of nodes holds the value)' };
    return tally(records, EXTEND, 'extended');
  }

  return {
    hello: hello({ name: 'redlock-universal', version: VERSION, steps: ['after-send', 'after-validity-check'] }),
    ...connection(clients),
    acquire,
    release,
    extend,
  };
}

run(adapter);
