'use strict';
// locklab adapter for node-redlock 5.0.0-beta.2 (npm "redlock", installed as
// the alias "redlock-v5"): Redlock over every --redis endpoint, by default
// acquire / release / extend, with `--using` holding the lock through
// redlock.using(). See README.md. The mapping, shared with its fork
// @sesamecare-oss/redlock, is ../redlock5.js; here is what is this library's.
const { default: Redlock, ExecutionError, Lock } = require('redlock-v5');
const { run, versionOf } = require('../protocol');
const { redlock5 } = require('../redlock5');

run(
  redlock5({
    name: 'node-redlock-v5',
    // The installed library's version, for hello.
    version: versionOf('redlock-v5'),
    Redlock,
    ExecutionError,
    // The library's defaults (`defaultSettings` in dist/cjs/index.js, README
    // "Configuration"): driftFactor 0.01, retryCount 10, retryDelay 200,
    // retryJitter 100, automaticExtensionThreshold 500. An acquire that may
    // wait wait_ms gets retryCount floor(wait_ms / 200) in its per-call
    // settings; release and extend run with the defaults. The Lock it hands
    // out has expiration = start of acquire() (before the first attempt) +
    // duration - drift.
    retryDelay: 200,
    scripts: (redlock) => ({
      acquire: redlock.scripts.acquireScript.hash,
      release: redlock.scripts.releaseScript.hash,
      extend: redlock.scripts.extendScript.hash,
    }),
    // The scripts' arguments, evalsha or eval: [script, 1, key, value, duration?].
    valueArg: 3,
    // An attempt's script is one of redlock.scripts ({ value, hash }), its
    // ARGV [value, duration?] (acquire, extend and release, lines 213, 256, 241).
    attemptOf: (script, args) => ({ sha: script.hash, value: args[0], ttlMs: args[1] }),
    ownerLock: (redlock, request) => new Lock(redlock, [request.lock], request.owner, [], Infinity),
    extend: (redlock, lock, ttl) => redlock.extend(lock, ttl),
    // using()'s routine gets only the AbortSignal; the lock value comes from
    // the Lock that using() got from `this.acquire` (observed by wrapping the
    // instance's acquire; one acquire runs at a time). Its extensions run
    // Lock.extend(duration), i.e. redlock.extend with the default settings
    // (10 retries).
    routineValue: (redlock) => {
      let acquired = null;
      const libraryAcquire = redlock.acquire;
      redlock.acquire = async function (...args) {
        acquired = await libraryAcquire.apply(this, args);
        return acquired;
      };
      return () => acquired.value;
    },
  }),
);
