'use strict';
// locklab adapter for @sesamecare-oss/redlock 1.4.0, the maintained fork of
// node-redlock 5: Redlock over every --redis endpoint, by default acquire /
// release / extend, with `--using` holding the lock through redlock.using().
// See README.md. The mapping, shared with node-redlock 5, is ../redlock5.js;
// here is what is this library's.
const { Redlock, ExecutionError, Lock } = require('@sesamecare-oss/redlock');
const { ensureCommands } = require('@sesamecare-oss/redlock/build/scripts');
const { run, versionOf } = require('../protocol');
const { redlock5 } = require('../redlock5');

run(
  redlock5({
    name: 'sesamecare-redlock',
    // The installed library's version, for hello.
    version: versionOf('@sesamecare-oss/redlock'),
    Redlock,
    ExecutionError,
    // The library's defaults (`defaultSettings` in build/index.js; its README
    // "Configuration" example shows the same but retryJitter 200):
    // driftFactor 0.01, retryCount 10, retryDelay 200, retryJitter 100,
    // automaticExtensionThreshold 500, db 0. An acquire that may wait wait_ms
    // gets retryCount floor(wait_ms / 200) in its per-call settings (which
    // the Lock keeps for its extend); release runs with the defaults. The
    // Lock it hands out has expiration = start of the successful attempt +
    // duration - drift.
    retryDelay: 200,
    // The library defines its scripts on each client at its first use
    // (ioredis defineCommand: EVAL on a new connection, EVALSHA after);
    // defining them now gives their hashes.
    scripts: (redlock, clients) => {
      clients.forEach(ensureCommands);
      const { acquireLock, releaseLock, extendLock } = clients[0].scriptsSet;
      return { acquire: acquireLock.sha, release: releaseLock.sha, extend: extendLock.sha };
    },
    // The scripts' arguments: [script, 1, key, db, value, duration?].
    valueArg: 4,
    // An attempt's script is the name of the command the library defined
    // ('acquireLock', 'extendLock', 'releaseLock'), its ARGV
    // [db, value, duration?] (build/index.js lines 152, 193, 180).
    attemptOf: (command, args, clients) => ({ sha: clients[0].scriptsSet[command].sha, value: args[1], ttlMs: args[2] }),
    ownerLock: (redlock, request) => new Lock(redlock, [request.lock], request.owner, [], Infinity, undefined),
    extend: (redlock, lock, ttl) => lock.extend(ttl),
    // using()'s routine gets (signal, context); context.lock.value is the
    // owner. The Lock keeps the merged settings, so its extensions retry
    // retryCount = floor(wait_ms / 200) times (lock.extend passes
    // this.settings); the final release uses the defaults (10 retries).
    routineValue: () => (signal, context) => context.lock.value,
  }),
);
