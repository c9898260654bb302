'use strict';
// The `--using` mode of the node-redlock 5 and @sesamecare-oss/redlock
// adapters (redlock5.js): the lock is held through the library's own
// auto-extension, `redlock.using(resources, duration, settings, routine)`, as
// its README recommends, instead of acquire / release.
//
// acquire runs using() with a routine that answers the lab as soon as it
// starts (the lock is acquired and the extension timer queued; validity_ms
// null: the library extends the lease itself) and then waits for the lab's
// release of that owner. held answers !signal.aborted: the only thing the
// library tells its routine when an extension fails (node-redlock #253,
// #309). release ends the routine; using()'s `finally` then clears the
// extension timer, waits for an extension in flight and releases the lock,
// and the adapter reports what that release did. Each extension using()
// sends in the background is reported as a renewal (redlock5.js, wrapping
// the library's attempts), so the lab knows where each lease ends.
//
// Its log lines (stderr) carry the wall-clock time, to set beside the
// history's client_time_ns.
//
// Both libraries' using() are the same code (redlock 5.0.0-beta.2
// dist/cjs/index.js lines 408-476, @sesamecare-oss/redlock 1.4.0
// build/index.js lines 322-392); redlock5.js passes in what differs:
//
//   usingHandlers({
//     tap,                                  // the adapter's clients.js Tap
//     round: (ctx) => tap round,            // the after-send step, as in the plain mode
//     start: (request, routine) => promise, // calls redlock.using(...) with a
//                                           // routine that calls routine(signal, lock value)
//     acquireFailed: (error, records) => response,
//     attemptNs: (owner) => ns | undefined, // the acquire's attempt_ns, as in the plain mode
//     releaseFailed: (error, records) => response,
//     releaseOther: (request) => response,  // release of an owner not held here (plain mode's)
//   }) → { acquire, release, extend, held }

function usingHandlers({ tap, round, start, acquireFailed, attemptNs, releaseFailed, releaseOther }) {
  // Holds running here, by owner (the lock value the library stored):
  // { signal, end, finished }.
  const holds = new Map();

  async function acquire(request, ctx) {
    const records = tap.record();
    tap.round = round(ctx);
    let begin;
    const began = new Promise((resolve) => (begin = resolve));
    const finished = start(request, (signal, value) => {
      // The adapter's deadline already answered "unknown" for this acquire
      // (protocol.js): nobody will release it, so end at once and let
      // using() release the lock.
      if (!ctx.live) return undefined;
      signal.addEventListener('abort', () => {
        const error = signal.error;
        console.error(`${new Date().toISOString()} using(): signal aborted for ${request.lock} ${value}: ${error ? error.message : '(no error)'}`);
      });
      return new Promise((end) => begin({ signal, value, end }));
    });
    // Read below or by release; logged too (a late acquire's is read by no one).
    finished.catch((error) => console.error(`${new Date().toISOString()} using() on ${request.lock} rejected: ${error && error.message}`));
    let hold;
    try {
      hold = await Promise.race([began, finished.then(() => null)]);
    } catch (error) {
      tap.round = null;
      return acquireFailed(error, records);
    } finally {
      tap.stop();
    }
    if (!hold) return { ok: false, unknown: true, error: 'using() ended before its routine started' };
    holds.set(hold.value, { ...hold, finished });
    // using() acquires with the library's acquire(): its winning attempt is
    // dated as in the plain mode.
    const attempt = attemptNs(hold.value);
    // Extended in the background until release: no deadline of its own.
    return { ok: true, owner: hold.value, validity_ms: null, ...(attempt === undefined ? {} : { attempt_ns: attempt }) };
  }

  async function held(request) {
    const hold = holds.get(request.owner);
    if (!hold) return { ok: false, error: 'cannot tell: no using() routine of this owner runs in this process' };
    if (hold.signal.aborted && !hold.reported) {
      hold.reported = true;
      console.error(`${new Date().toISOString()} held: false for ${request.owner}: signal.error = ${hold.signal.error && hold.signal.error.message}`);
    }
    return { ok: true, held: !hold.signal.aborted };
  }

  async function release(request) {
    const hold = holds.get(request.owner);
    if (!hold) return releaseOther(request);
    holds.delete(request.owner);
    const records = tap.record();
    hold.end(); // the routine returns; using() releases in its `finally`
    try {
      await hold.finished;
      return { ok: true };
    } catch (error) {
      return releaseFailed(error, records);
    } finally {
      tap.stop();
    }
  }

  async function extend() {
    return { ok: false, error: 'unsupported with --using: the library extends the lease itself (using())' };
  }

  return { acquire, release, extend, held };
}

module.exports = { usingHandlers };
