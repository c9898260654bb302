'use strict';
// The adapter of node-redlock 5 and of its maintained fork,
// @sesamecare-oss/redlock: Redlock over every --redis endpoint. The fork
// keeps the library's API, its defaults and its error types, so both map
// alike; each adapter.js passes in what differs (its classes, where its
// scripts' hashes are, their arguments, how a Lock is rebuilt, extended, and
// found in using()'s routine) and runs the handlers this returns:
//
//   run(redlock5({
//     name, version,               // hello's ("-using" added with --using)
//     Redlock, ExecutionError,     // the library's classes
//     retryDelay,                  // its default retryDelay, ms
//     scripts: (redlock, clients) => ({ acquire, release, extend }), // SHA1s
//     valueArg,                    // the lock value's index in a script's arguments
//     ownerLock: (redlock, request) => Lock,    // a Lock of request.owner
//     extend: (redlock, lock, ttl) => Promise<Lock>,
//     routineValue: (redlock) => (signal, context) => the lock value, in using()'s routine
//   }));
//
// Two modes: by default acquire / release / extend map to the library's
// acquire / release / extend. With `--using` an acquire holds the lock
// through the library's auto-extension, redlock.using() (using.js).
const { hello, endpointsFrom } = require('./protocol');
const { tapped, outcomeOf, lost, settled, failedAcquire, describe } = require('./clients');
const { usingHandlers } = require('./using');

function redlock5(library) {
  const { Redlock, ExecutionError, retryDelay, valueArg, ownerLock } = library;
  const USING = process.argv.includes('--using');

  const { clients, tap, ready } = tapped(endpointsFrom(process.argv));

  // The library's defaults, but for an acquire that may wait wait_ms: it
  // gets retryCount floor(wait_ms / retryDelay) in its per-call settings.
  const redlock = new Redlock(clients);
  const settingsFor = (request) => ({ retryCount: Math.floor(request.wait_ms / retryDelay) });
  const { acquire: ACQUIRE, release: RELEASE, extend: EXTEND } = library.scripts(redlock, clients);

  function classify(record) {
    if (record.sha === ACQUIRE) return { lock: true, value: record.args[valueArg], set: (reply) => +reply === 1 };
    if (record.sha === RELEASE) return { unlock: true, value: record.args[valueArg] };
    return null;
  }

  // Locks acquired here, by owner (the random value the library stored).
  const held = new Map();

  // The library's Lock for `owner`: the one acquired here, or one built from
  // the owner value (all release needs; extend also checks `expiration`,
  // unknown for another process's lock, so it is not limited here).
  function lockOf(request) {
    return held.get(request.owner) || ownerLock(redlock, request);
  }

  // The response to a failed acquire, from the commands it sent.
  async function acquireFailed(error, records) {
    // Refused before sending anything (e.g. using()'s "A lock `duration` must
    // be at least 100ms greater than the `automaticExtensionThreshold`").
    if (!records.length) return { ok: false, error: error.message };
    if (!(error instanceof ExecutionError)) return outcomeOf(error);
    // After its last attempt the library ran the release script once on
    // every node and waited only for a quorum of answers (redlock
    // 5.0.0-beta.2 dist/cjs/index.js lines 219-228, @sesamecare-oss/redlock
    // 1.4.0 build/index.js lines 158-166); wait for the rest to know where a
    // key may remain.
    return failedAcquire(records, classify, clients.length, (last) => `${error.message} (${error.attempts.length} attempts; ${last})`);
  }

  // The after-send step: the acquire script sent to every node in one
  // attempt. ioredis notes it as "evalsha" (redlock 5 sends EVALSHA, then
  // EVAL after NOSCRIPT, after the step; the fork's defined command is
  // written as EVAL on a connection that has not sent it yet).
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
      lock = await redlock.acquire([request.lock], request.ttl_ms, settingsFor(request));
    } catch (error) {
      tap.round = null;
      return acquireFailed(error, records);
    } finally {
      tap.stop();
    }
    held.set(lock.value, lock);
    // lock.expiration (start + duration - drift; each adapter.js says from
    // which start): what the library tells its users. No step
    // "after-validity-check": neither compares the expiration with the time
    // the quorum was reached.
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
      const extended = await library.extend(redlock, lock, request.ttl_ms);
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
  // library's defaults otherwise (automaticExtensionThreshold 500 ms: a
  // ttl_ms under 600 is refused by using() before it sends anything); the
  // lock value in the routine as the adapter finds it (routineValue).
  function usingMode() {
    const valueIn = library.routineValue(redlock);
    return usingHandlers({
      tap,
      round: acquireRound,
      start: (request, routine) =>
        ready.then(() =>
          redlock.using([request.lock], request.ttl_ms, settingsFor(request), (signal, context) =>
            routine(signal, valueIn(signal, context)),
          ),
        ),
      acquireFailed,
      releaseFailed,
      releaseOther: release,
    });
  }

  const answer = hello({ name: USING ? `${library.name}-using` : library.name, version: library.version, steps: ['after-send'], renews: USING });
  return USING ? { hello: answer, ...usingMode() } : { hello: answer, acquire, release, extend };
}

module.exports = { redlock5 };
