'use strict';
// locklab adapter for @sesamecare-oss/redlock 1.4.0, the maintained fork of
// node-redlock 5: Redlock over every --redis endpoint. See README.md.
//
// Two modes: by default acquire / release / extend map to the library's
// acquire / release / extend. With `--using` an acquire holds the lock
// through the library's auto-extension, redlock.using() (../using.js).
const { Redlock, ExecutionError, Lock } = require('@sesamecare-oss/redlock');
const { ensureCommands } = require('@sesamecare-oss/redlock/build/scripts');
const { run, hello, endpointsFrom, versionOf } = require('../protocol');
const { tapped, outcomeOf, lost, settled, failedAcquire, describe } = require('../clients');
const { usingHandlers } = require('../using');

// The installed library's version, for hello.
const VERSION = versionOf('@sesamecare-oss/redlock');
const USING = process.argv.includes('--using');

const { clients, tap, ready } = tapped(endpointsFrom(process.argv));

// The library's defaults (`defaultSettings` in build/index.js; its README
// "Configuration" example shows the same but retryJitter 200): driftFactor
// 0.01, retryCount 10, retryDelay 200, retryJitter 100,
// automaticExtensionThreshold 500, db 0. An acquire that may wait wait_ms
// gets retryCount floor(wait_ms / 200) in its per-call settings (which the
// Lock keeps for its extend); release runs with the defaults.
const RETRY_DELAY = 200;
const redlock = new Redlock(clients);
// The library defines its scripts on each client at its first use (ioredis
// defineCommand: EVAL on a new connection, EVALSHA after); defining them
// now gives their hashes.
clients.forEach(ensureCommands);
const ACQUIRE = clients[0].scriptsSet.acquireLock.sha;
const RELEASE = clients[0].scriptsSet.releaseLock.sha;
const EXTEND = clients[0].scriptsSet.extendLock.sha;

// The scripts' arguments: [script, 1, key, db, value, duration?].
function classify(record) {
  if (record.sha === ACQUIRE) return { lock: true, value: record.args[4], set: (reply) => +reply === 1 };
  if (record.sha === RELEASE) return { unlock: true, value: record.args[4] };
  return null;
}

// Locks acquired here, by owner (the random value the library stored).
const held = new Map();

// The library's Lock for `owner`: the one acquired here, or one built from
// the owner value (all release needs; extend also checks `expiration`,
// unknown for another process's lock, so it is not limited here).
function lockOf(request) {
  return held.get(request.owner) || new Lock(redlock, [request.lock], request.owner, [], Infinity, undefined);
}

// The response to a failed acquire, from the commands it sent.
async function acquireFailed(error, records) {
  // Refused before sending anything (e.g. using()'s "A lock `duration` must
  // be at least 100ms greater than the `automaticExtensionThreshold`").
  if (!records.length) return { ok: false, error: error.message };
  if (!(error instanceof ExecutionError)) return outcomeOf(error);
  // After its last attempt the library ran the release script once on
  // every node and waited only for a quorum of answers (build/index.js
  // lines 158-166); wait for the rest to know where a key may remain.
  return failedAcquire(records, classify, clients.length, (last) => `${error.message} (${error.attempts.length} attempts; ${last})`);
}

// The after-send step: ioredis sends a defined script as an "evalsha"
// command (written as EVAL on a connection that has not sent it yet).
function acquireRound(ctx) {
  return { match: (record) => record.name === 'evalsha' && record.sha === ACQUIRE, announce: () => ctx.step('after-send') };
}

// The response to a failed release, from the commands it sent.
async function releaseFailed(error, records) {
  if (!(error instanceof ExecutionError)) return outcomeOf(error);
  await settled(records);
  return votes(records, RELEASE, 'release', error);
}

async function acquire(request, ctx) {
  await ready;
  const start = Date.now();
  const records = tap.record();
  tap.round = acquireRound(ctx);
  let lock;
  try {
    lock = await redlock.acquire([request.lock], request.ttl_ms, {
      retryCount: Math.floor(request.wait_ms / RETRY_DELAY),
    });
  } catch (error) {
    tap.round = null;
    return acquireFailed(error, records);
  } finally {
    tap.stop();
  }
  held.set(lock.value, lock);
  // lock.expiration = start of the successful attempt + duration - drift:
  // what the library tells its users. No step "after-validity-check": the
  // library never compares the expiration with the time the quorum was
  // reached.
  return { ok: true, owner: lock.value, validity_ms: Math.max(0, lock.expiration - start) };
}

// Votes of a script run on every node: definitely not done only if every
// node answered and none applied it.
function votes(records, sha, label, error) {
  const runs = records.filter((record) => record.sha === sha);
  const applied = runs.some((record) => record.state === 'reply' && +record.reply >= 1);
  const last = describe(runs.slice(-clients.length), () => ({ label }));
  const what = `${error.message} (${error.attempts.length} attempts; last: ${last})`;
  if (applied || runs.some(lost)) return { ok: false, unknown: true, error: what };
  return { ok: false, error: `not held: ${what}` };
}

async function release(request) {
  await ready;
  const lock = lockOf(request);
  held.delete(request.owner);
  const records = tap.record();
  try {
    await redlock.release(lock);
    return { ok: true };
  } catch (error) {
    return releaseFailed(error, records);
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
    const extended = await lock.extend(request.ttl_ms);
    held.set(request.owner, extended);
    return { ok: true, validity_ms: Math.max(0, extended.expiration - start) };
  } catch (error) {
    if (!(error instanceof ExecutionError)) return outcomeOf(error);
    if (!records.length) return { ok: false, error: error.message }; // "already-expired": nothing sent
    await settled(records);
    return votes(records, EXTEND, 'extend', error);
  } finally {
    tap.stop();
  }
}

// --using: redlock.using([lock], ttl_ms, { retryCount }, routine), the
// library's defaults otherwise (automaticExtensionThreshold 500 ms: a ttl_ms
// under 600 is refused by using() before it sends anything). Its routine
// gets (signal, context); context.lock.value is the owner. The Lock keeps the
// merged settings, so its extensions retry retryCount = floor(wait_ms / 200)
// times (lock.extend passes this.settings); the final release uses the
// defaults (10 retries).
function usingMode() {
  return usingHandlers({
    tap,
    round: acquireRound,
    start: (request, routine) =>
      ready.then(() =>
        redlock.using([request.lock], request.ttl_ms, { retryCount: Math.floor(request.wait_ms / RETRY_DELAY) }, (signal, context) =>
          routine(signal, context.lock.value),
        ),
      ),
    acquireFailed,
    releaseFailed,
    releaseOther: release,
  });
}

const answer = hello({ name: USING ? 'sesamecare-redlock-using' : 'sesamecare-redlock', version: VERSION, steps: ['after-send'], renews: USING });

run(USING ? { hello: answer, ...usingMode() } : { hello: answer, acquire, release, extend });
