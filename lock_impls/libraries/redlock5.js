'use strict';
// The adapter of node-redlock 5 and of its maintained fork,
// @sesamecare-oss/redlock: Redlock over every --redis endpoint. The fork
// keeps the library's API, its defaults and its error types, so both map
// alike; each adapter.js passes in what differs (its classes, where its
// scripts' hashes are, their arguments, how a Lock is rebuilt, extended, and
// found in using()'s routine) and runs the handlers this returns:
//
//   run(redlock5({                 // the adapter of a run, as protocol.js `run` takes it
//     name, version,               // hello's ("-using" added with --using)
//     Redlock, ExecutionError,     // the library's classes
//     retryDelay,                  // its default retryDelay, ms
//     scripts: (redlock, clients) => ({ acquire, release, extend }), // SHA1s
//     valueArg,                    // the lock value's index in a script's arguments
//     ownerLock: (redlock, request) => Lock,    // a Lock of request.owner
//     extend: (redlock, lock, ttl) => Promise<Lock>,
//     routineValue: (redlock) => (signal, context) => the lock value, in using()'s routine
//     attemptOf: (script, args, clients) => ({ sha, value, ttlMs }), // an attempt's script and ARGV
//   }));
//
// Two modes: by default acquire / release / extend map to the library's
// acquire / release / extend. With `--using` an acquire holds the lock
// through the library's auto-extension, redlock.using() (using.js), and every
// extension it sends is reported as a renewal.
const { hello, renewed, monotonicNs } = require('./protocol');
const { tapped, connection, outcomeOf, lost, settled, failedAcquire, describe } = require('./clients');
const { usingHandlers } = require('./using');

function redlock5(library) {
  return (endpoints) => redlock5On(endpoints, library);
}

// The handlers of one run, on `endpoints`.
function redlock5On(endpoints, library) {
  const { Redlock, ExecutionError, retryDelay, valueArg, ownerLock } = library;
  const USING = process.argv.includes('--using');

  const { clients, tap, ready } = tapped(endpoints);

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

  // Attempts. Both libraries run an operation (acquire, extend, release) as
  // attempts of `_attemptOperation(script, keys, args)` (redlock 5.0.0-beta.2
  // dist/cjs/index.js lines 282 and 300-354, @sesamecare-oss/redlock 1.4.0
  // build/index.js lines 218 and 233-289), one after another, a retryDelay
  // apart. An attempt calls `_attemptOperationOnClient` for every client in
  // one synchronous loop, each of which sends its script at once (EVALSHA;
  // after a NOSCRIPT, later, the same script again), and the attempt's vote is
  // "for" as soon as a quorum of clients answered that the script applied.
  // The adapter wraps both methods on its instance (the library calls them
  // through `this`) to see where each attempt begins in what the tap noted,
  // and each client's answer. `current` is the attempt whose loop runs.
  let current = null;
  // The attempts of the acquire under way, by lock value (one acquire runs
  // at a time: a new value starts afresh).
  const tries = new Map();
  const attemptOperation = redlock._attemptOperation;
  redlock._attemptOperation = function (script, keys, args) {
    const { sha, value, ttlMs } = library.attemptOf(script, args, clients);
    const attempt = { sha, value, ttlMs, lock: keys[0], votes: [], sentNs: monotonicNs() };
    // Where its commands begin among those the tap notes (none outside a
    // recording): the loop sends each client's first command before the call
    // returns.
    attempt.records = tap.records;
    attempt.from = tap.records ? tap.records.length : 0;
    if (sha === ACQUIRE) {
      if (!tries.has(value)) tries.clear();
      tries.set(value, [...(tries.get(value) || []), attempt]);
    }
    current = attempt;
    let result;
    try {
      result = attemptOperation.call(this, script, keys, args);
    } finally {
      current = null;
    }
    // Runs before the library's own `await` of the vote (attached first).
    result.then(
      ({ vote }) => {
        attempt.answeredNs = monotonicNs();
        if (sha === EXTEND && USING) renewal(attempt, vote);
      },
      () => {}, // the library's own rejection, left to the library
    );
    return result;
  };
  const attemptOperationOnClient = redlock._attemptOperationOnClient;
  redlock._attemptOperationOnClient = function (client, script, keys, args) {
    const attempt = current;
    const result = attemptOperationOnClient.call(this, client, script, keys, args);
    if (attempt) {
      // 'pending' until this client's answer is in (its handler runs before
      // the library counts it: attached first).
      const vote = { state: 'pending' };
      attempt.votes.push(vote);
      result.then(
        ({ vote: choice, error }) => (vote.state = choice === 'for' ? 'for' : mayHaveRun(error) ? 'lost' : 'against'),
        () => (vote.state = 'lost'),
      );
    }
    return result;
  };

  // A client's vote against that may still have applied the script: its
  // reply was lost (a timeout, a connection dropped with it in flight). Not
  // so for a reply that the script did nothing (the library's
  // ResourceLockedError), an error from Redis, or a command never written.
  function mayHaveRun(error) {
    return !!error && error.name !== 'ResourceLockedError' && outcomeOf(error).unknown === true;
  }

  // attempt_ns of a successful acquire of `owner`: when the first command of
  // the attempt that took the lock was sent. The library returns after the
  // attempt whose vote was "for" (the last one: `_execute` returns at once),
  // but every attempt stores the same value and none deletes it before the
  // next, so a majority of nodes may have held the value before, set by
  // earlier attempts together (one node per attempt, or a reply lost). The
  // attempt counted is the first after which the nodes that may hold the
  // value (a client that answered that the script applied, or whose answer
  // was lost or is not in yet), over this acquire's attempts so far, make a
  // quorum; keys are taken never to expire, which can only make it earlier.
  // The winning attempt has such a quorum of its own, so it is never later
  // than that attempt. The attempt's first command was sent no later than
  // any of its own (a NOSCRIPT's EVAL comes after it); when the tap noted
  // nothing, the attempt's start, read before its loop.
  function attemptNs(owner) {
    const attempts = tries.get(owner) || [];
    tries.delete(owner);
    const maybe = new Set();
    const attempt = attempts.find(({ votes }) => {
      votes.forEach((vote, node) => vote.state !== 'against' && maybe.add(node));
      return maybe.size >= Math.floor(votes.length / 2) + 1;
    });
    if (!attempt) return undefined;
    const records = attempt.records || [];
    for (let i = attempt.from; i < records.length; i++) {
      const kind = classify(records[i]);
      if (kind && kind.lock && kind.value === owner) return records[i].sentNs;
    }
    return attempt.sentNs;
  }

  // --using: each attempt of an extension that using() sends (its timer's
  // lock.extend, retried by `_execute`) is one renewal of the lease, dated
  // from before its loop sent the script to the first client to the moment
  // the library counted its vote. ok: the library counted a quorum of
  // clients that extended the key (then a majority holds it at least
  // ttl_ms from sent_ns: the lease end surely moved). unknown: no quorum
  // counted, but the clients that extended it and those whose answer was
  // lost or not yet in could make one (it may have moved, as far as
  // answered_ns + ttl_ms). Else refused: too few may have extended it for a
  // majority to hold the key longer. An attempt refused before sending
  // ("Cannot extend an already-expired lock.") sends nothing and is none.
  function renewal(attempt, vote) {
    const count = (state) => attempt.votes.filter((v) => v.state === state).length;
    const quorum = Math.floor(attempt.votes.length / 2) + 1;
    const ok = vote === 'for';
    renewed({
      lock: attempt.lock,
      owner: attempt.value,
      ttlMs: Number(attempt.ttlMs),
      sentNs: attempt.sentNs,
      answeredNs: attempt.answeredNs,
      ok,
      unknown: !ok && count('for') + count('lost') + count('pending') >= quorum,
    });
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
    const attempt = attemptNs(lock.value);
    // lock.expiration (start + duration - drift; each adapter.js says from
    // which start): what the library tells its users. No step
    // "after-validity-check": neither compares the expiration with the time
    // the quorum was reached.
    return {
      ok: true,
      owner: lock.value,
      validity_ms: Math.max(0, lock.expiration - start),
      ...(attempt === undefined ? {} : { attempt_ns: attempt }),
    };
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
      attemptNs,
      releaseFailed,
      releaseOther: release,
    });
  }

  const answer = hello({
    name: USING ? `${library.name}-using` : library.name,
    version: library.version,
    steps: ['after-send'],
    renews: USING,
    renewals: USING,
  });
  return USING
    ? { hello: answer, ...connection(clients), ...usingMode() }
    : { hello: answer, ...connection(clients), acquire, release, extend };
}

module.exports = { redlock5 };
