'use strict';
// ioredis clients as the Node adapters use them, and a tap that watches the
// commands a library sends through them.
//
// Client options: a partitioned or paused server must give an answer within
// the lab's reply timeout, and a command must never be sent late, after the
// library was told it failed. So: every command times out after 1 s
// (commandTimeout; ioredis has none by default), a connection attempt after
// 0.5 s (connectTimeout; default 10 s); a command issued while the connection
// is down fails at once instead of waiting in the offline queue
// (enableOfflineQueue: false; the queue would send it after the reconnect,
// when its caller was long told it failed); a command in flight when the
// connection drops fails at once and is not resent (maxRetriesPerRequest: 0;
// default 20 reconnects). The client reconnects every 100 ms for ever
// (retryStrategy; default 50 ms more per attempt, at most 2 s), so it is back
// soon after a partition heals. Everything else is ioredis' default.

const crypto = require('crypto');
const Redis = require('ioredis');
const { monotonicNs } = require('./protocol');

const CLIENT_OPTIONS = {
  commandTimeout: 1000,
  connectTimeout: 500,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  retryStrategy: () => 100,
};

function connect(endpoints, extra = {}) {
  return endpoints.map(({ host, port }, node) => {
    const client = new Redis({
      host,
      port,
      ...CLIENT_OPTIONS,
      // On a target with credentials the lab passes them in the environment.
      username: process.env.LOCKLAB_REDIS_USERNAME || undefined,
      password: process.env.LOCKLAB_REDIS_PASSWORD || undefined,
      ...extra,
    });
    let last = '';
    client.on('error', (error) => {
      if (error.message !== last) console.error(`redis node ${node}: ${error.message}`);
      last = error.message;
    });
    client.on('ready', () => (last = ''));
    return client;
  });
}

// An adapter's clients on `endpoints`, the tap on them, and a promise of
// their first connection.
function tapped(endpoints) {
  const clients = connect(endpoints);
  return { clients, tap: new Tap(clients), ready: whenReady(clients) };
}

// Waits (at most `ms`) for every client's first connection: without an
// offline queue, a command sent before it is refused.
function whenReady(clients, ms = 1000) {
  const ready = clients.map((client) =>
    client.status === 'ready' ? null : new Promise((resolve) => client.once('ready', resolve)),
  );
  return Promise.race([Promise.all(ready), new Promise((resolve) => setTimeout(resolve, ms))]);
}

// The answer to the lab's `connect` (harness/adapter/PROTOCOL.md, "Connecting"):
// ok once every client is connected, so that the story's clock starts with
// the connections an application would have open. A fault at the story's
// start (a partition at 0 ms) then finds them open, as it would in
// production, instead of resetting them half-made and holding the first
// acquire until `whenReady` gives up. Not connected within `ms`: an error
// naming the endpoints, which stops the run.
async function connected(clients, ms = 5000) {
  await whenReady(clients, ms);
  const missing = clients
    .filter((client) => client.status !== 'ready')
    .map((client) => `${client.options.host}:${client.options.port}`);
  if (missing.length)
    return { ok: false, error: `redis ${missing.join(', ')}: not connected within ${ms} ms` };
  return { ok: true };
}

// Closes `clients` at once, without QUIT and without waiting for replies
// (a command in flight is rejected): what a reset needs, since the run is
// over and nothing may be released. Resolves once each has ended, or has
// no connection left to end (between a lost connection and its reconnect:
// disconnect() cancels the reconnect), or after `ms`.
function disconnect(clients, ms = 1000) {
  return Promise.all(
    clients.map((client) => {
      const open = !['end', 'close', 'reconnecting'].includes(client.status);
      const ended = open ? new Promise((resolve) => client.once('end', resolve)) : null;
      client.disconnect();
      return ended && Promise.race([ended, new Promise((resolve) => setTimeout(resolve, ms))]);
    }),
  );
}

// The `connect` and `close` handlers of an adapter whose library talks
// through `clients` (ioredis): connected before the story's clock starts,
// closed at a reset (protocol.js).
function connection(clients) {
  return { connect: () => connected(clients), close: () => disconnect(clients) };
}

// ioredis refused the command before writing it: it never reached Redis.
function notSent(error) {
  return !!error && /^Stream isn't writeable/.test(error.message);
}

// What a failed call means: a refusal by Redis (a ReplyError, e.g. READONLY)
// or a command never written is "definitely not"; anything else (a timeout, a
// connection lost with the command in flight) is "unknown".
function outcomeOf(error) {
  const message = (error && error.message) || String(error);
  if (notSent(error) || (error && error.name === 'ReplyError')) return { ok: false, error: message };
  return { ok: false, unknown: true, error: message };
}

// The tap wraps each client's sendCommand to note every command sent while a
// recording is open (its node, name, arguments, and later its reply or
// error), and, while `round` is set, to hold back from the library the
// replies of the commands `round.match` picks. Those sent in one go (the same
// tick: a library sending its SET to every node in one loop) form a round:
// once the loop is done and their replies are in (at most ANNOUNCE_GRACE_MS
// for a node that does not answer), `round.announce()` is awaited (e.g.
// ctx.step), and only then does the library see their replies. The replies
// themselves are read by ioredis as they come (one that arrives while the
// adapter waits at the step clears its command timeout); only their delivery
// to the library waits. A reply that arrives only after a SIGSTOP longer than
// the command timeout (a node slower than the grace) counts as timed out:
// Node runs the overdue timer before it reads the socket, as it would for any
// ioredis application paused that long.
class Tap {
  constructor(clients) {
    this.records = null;
    this.round = null;
    this.gate = null;
    clients.forEach((client, node) => this.wrap(client, node));
  }

  // Starts noting commands; returns the list they go to.
  record() {
    this.records = [];
    return this.records;
  }

  stop() {
    this.records = null;
    this.round = null;
  }

  wrap(client, node) {
    const tap = this;
    const send = client.sendCommand;
    client.sendCommand = function (command, stream) {
      // Noted before sending: ioredis may rename a defined script's "evalsha"
      // to EVAL as it writes it.
      const record = tap.records && tap.note(node, command);
      const promise = send.call(this, command, stream);
      if (record) tap.settle(record, promise);
      if (!record || !tap.round || !tap.round.match(record)) return promise;
      if (!tap.gate) {
        let open;
        tap.gate = new Promise((resolve) => (open = resolve));
        const round = (tap.gate.records = []);
        const { announce } = tap.round;
        queueMicrotask(() => {
          tap.gate = null;
          // The step is announced once the replies of the round are in
          // (read by ioredis, not yet handed to the library), or after
          // ANNOUNCE_GRACE_MS for a node that does not answer: a pause that
          // fires at the step then finds them waiting, as the built-in's
          // replies wait in its sockets, instead of racing the SIGSTOP.
          open(inOrAfter(round, ANNOUNCE_GRACE_MS).then(announce));
        });
      }
      tap.gate.records.push(record);
      const gate = tap.gate;
      return promise.then(
        (value) => gate.then(() => value),
        (error) => gate.then(() => Promise.reject(error)),
      );
    };
    // A library that passes a callback (node-redlock 4) gets it through the
    // promise sendCommand returned, so that a held reply holds it too.
    for (const name of ['evalsha', 'eval', 'set']) {
      const method = client[name];
      client[name] = function (...args) {
        if (typeof args[args.length - 1] !== 'function') return method.apply(this, args);
        const callback = args.pop();
        const promise = method.apply(this, args);
        // As ioredis does, the callback's return value is ignored.
        promise.then(
          (value) => void callback(null, value),
          (error) => void callback(error),
        );
        return promise;
      };
    }
  }

  note(node, command) {
    const args = command.args.map((arg) => String(arg));
    const record = { node, name: command.name, args, state: 'pending', sentNs: monotonicNs() };
    if (command.name === 'evalsha') record.sha = args[0];
    if (command.name === 'eval') record.sha = crypto.createHash('sha1').update(args[0]).digest('hex');
    this.records.push(record);
    return record;
  }

  settle(record, promise) {
    record.done = promise.then(
      (reply) => Object.assign(record, { state: 'reply', reply }),
      (error) => Object.assign(record, { state: stateOf(error), error }),
    );
  }
}

// How long a round's step announcement waits for replies that have not come
// (a node partitioned, stalled or slow): the step must still fire at about
// the moment the commands were sent.
const ANNOUNCE_GRACE_MS = 50;

// Resolves once every record has its reply or error, or after `ms`.
function inOrAfter(records, ms) {
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([Promise.all(records.map((record) => record.done)), late]).finally(() =>
    clearTimeout(timer),
  );
}

// How a command failed: 'not-sent' (ioredis refused to write it), 'refused'
// (Redis answered with an error, e.g. NOSCRIPT, READONLY: it did not run), or
// 'error' (a timeout or a connection lost: it may have run).
function stateOf(error) {
  if (notSent(error)) return 'not-sent';
  if (error && error.name === 'ReplyError') return 'refused';
  return 'error';
}

// A command whose reply was lost: it may have run.
function lost(record) {
  return record.state === 'error' || record.state === 'pending';
}

// Waits until every noted command has its reply or error (at most the 1 s
// command timeout after it was sent).
function settled(records) {
  return Promise.all(records.map((record) => record.done));
}

// When the attempt that won was sent (CLOCK_MONOTONIC, for the acquire's
// "attempt_ns"), on one node: the last lock command among `records` that set
// the key to `owner` (classify(record), as for leftovers below) is the
// command that took the lock. Undefined when none did.
function winningSentNs(records, classify, owner) {
  for (let i = records.length - 1; i >= 0; i--) {
    const kind = classify(records[i]);
    if (kind && kind.lock && kind.value === owner && records[i].state === 'reply' && kind.set(records[i].reply))
      return records[i].sentNs;
  }
  return undefined;
}

// When the attempt that won was sent (CLOCK_MONOTONIC), over several nodes,
// for a library whose failed attempts delete their value on every node
// before the next (node-redlock 4, redis-semaphore's RedlockMutex) or give
// each attempt a value of its own (redlock-universal): the first lock
// command of `owner` after its last delete. With no delete in between, an
// earlier attempt's first command: too early, never too late. Undefined
// when no lock command of `owner` was seen.
function firstOfLastAttemptNs(records, classify, owner) {
  let first;
  for (const record of records) {
    const kind = classify(record);
    if (!kind || kind.value !== owner) continue;
    if (kind.unlock) first = undefined;
    else if (kind.lock && first === undefined) first = record.sentNs;
  }
  return first;
}

// The nodes where a lock command among `records` may have left a key: one
// that set it (as `classify` judges the reply) or whose reply was lost, not
// followed on that node by an answered unlock of the same value.
// classify(record) → null for other commands, or { value, lock: true,
// set: reply => bool } for a lock command, or { value, unlock: true }.
function leftovers(records, classify) {
  const maybe = new Map();
  for (const record of records) {
    const kind = classify(record);
    if (!kind) continue;
    const key = `${record.node}\n${kind.value}`;
    if (kind.lock) {
      if (lost(record) || (record.state === 'reply' && kind.set(record.reply))) maybe.set(key, record.node);
    } else if (kind.unlock && record.state === 'reply') {
      maybe.delete(key);
    }
  }
  return [...new Set(maybe.values())].sort();
}

// The response to an acquire that failed after its lock commands went to
// `nodes` nodes: once every reply is in, "unknown" when a key may remain on
// some node (leftovers), else "definitely not". say(last) words the error,
// given an account of the last two commands of each node.
async function failedAcquire(records, classify, nodes, say) {
  await settled(records);
  const left = leftovers(records, classify);
  const what = say(describe(records.slice(-2 * nodes), classify));
  if (left.length) return { ok: false, unknown: true, error: `${what}; the key may remain on nodes ${left}` };
  return { ok: false, error: what };
}

// A short account of what each node answered, for error messages (a kind's
// `label`, else lock/unlock).
function describe(records, classify) {
  return records
    .map((record) => {
      const kind = classify(record);
      if (!kind) return null;
      const what = kind.label || (kind.lock ? 'lock' : 'unlock');
      const got =
        record.state === 'reply'
          ? JSON.stringify(record.reply)
          : `${record.state}${record.error ? ` (${record.error.message})` : ''}`;
      return `node ${record.node} ${what} ${got}`;
    })
    .filter(Boolean)
    .join('; ');
}

module.exports = {
  CLIENT_OPTIONS,
  connect,
  tapped,
  whenReady,
  connected,
  connection,
  disconnect,
  notSent,
  outcomeOf,
  Tap,
  lost,
  settled,
  leftovers,
  failedAcquire,
  describe,
  winningSentNs,
  firstOfLastAttemptNs,
};
