'use strict';
// The locklab adapter protocol (harness/adapter/PROTOCOL.md) for the Node
// adapters in this folder: one JSON request per line on stdin, one JSON
// response per line on stdout, steps announced and continued. Each adapter
// only maps hello/acquire/release/extend to its library:
//
//   const { run, hello, versionOf } = require('../protocol');
//   run((endpoints) => {
//     const clients = ...; // the library's clients on endpoints
//     return { hello: hello({ name: 'my-lock', version: versionOf('my-lock') }),
//              ...connection(clients), acquire, release, extend };
//   });
//
// run(adapter) calls adapter(endpoints) at the first hello, with the --redis
// endpoints, to build the library's clients and get the handlers of a run.
// An adapter whose handlers have `close` is reusable (PROTOCOL.md, "Kept
// between runs"): at `reset` the protocol awaits close(), which closes
// every client it built without releasing anything, stops every timer the
// run left (below), forgets the run's incidents and renewals, and calls
// adapter(endpoints) again at the next hello, with that hello's `redis`.
// A handler gets (request, ctx) and returns the response without "id":
// { ok: true, ... }, { ok: false, error }, or { ok: false, unknown: true, error }.
// ctx.step(name) announces a step declared in hello and resolves once the lab
// answers "continue". ctx.endpoints is the parsed --redis list. ctx.live is
// true until the request has been answered (false once the deadline below
// answered "unknown" while the library's call goes on in the background).
// A library that renews in the background adds a `held` handler (and says
// hello with "renews": true).
//
// versionOf(package) reads the installed version of a package for hello's
// "version", e.g. "redlock 4.2.0"; hello({ name, version, steps, renews,
// renewals }) is the hello handler that answers with them (and says the
// adapter reports incidents: unhandled rejections, below).
//
// An adapter that sees every renewal its library makes in the background
// says hello with `renewals: true` and calls renewed(...) for each, dated by
// monotonicNs(); they are attached to the next response (PROTOCOL.md,
// "Renewals").

const fs = require('fs');
const path = require('path');
const readline = require('readline');

// Nothing but responses may reach stdout: libraries that log with console.log
// log to stderr instead.
for (const name of ['log', 'info', 'debug', 'warn']) console[name] = console.error;

// The timers a run leaves behind. A library schedules its own work
// (retries, renewals, refreshes, reconnects) with the global timer
// functions; after a reset none of it may run, since its callbacks would
// act on the closed clients of a finished run and report what they met in
// the next one. So the global functions note every timer they make, and a
// reset clears those still pending. The protocol's own timers are made
// with the functions as Node has them.
const node = { setTimeout, clearTimeout, setInterval, clearInterval };
const pending = new Set();
globalThis.setTimeout = function (callback, ...rest) {
  const timer = node.setTimeout(function (...args) {
    pending.delete(timer);
    return callback.apply(this, args);
  }, ...rest);
  pending.add(timer);
  return timer;
};
globalThis.setInterval = function (...args) {
  const timer = node.setInterval(...args);
  pending.add(timer);
  return timer;
};
globalThis.clearTimeout = globalThis.clearInterval = function (timer) {
  pending.delete(timer);
  node.clearTimeout(timer); // Node clears either kind with either function
};

// Clears every timer the run left.
function clearRunTimers() {
  for (const timer of pending) node.clearTimeout(timer);
  pending.clear();
}

// Node's default for a rejected promise nobody awaits is to kill the process.
// Some libraries leave such promises behind in their background work (a
// renewal or a subscription that fails). The adapter must go on serving the
// lab, so it catches them, but it reports each as an incident (PROTOCOL.md,
// "Incidents"): the cell then says where an application on Node's defaults
// would have crashed. Times count from hello, on the monotonic clock.
let helloAt = null;
const incidents = [];
process.on('unhandledRejection', (error) => {
  console.error('unhandled rejection:', error && error.stack ? error.stack : error);
  const message = String((error && error.message) || error).split('\n')[0];
  const atMs = helloAt === null ? 0 : Number(process.hrtime.bigint() - helloAt) / 1e6;
  incidents.push({ kind: 'unhandled-rejection', message, at_ms: atMs });
});

// The incidents not yet reported, for the next response.
function takeIncidents() {
  return incidents.splice(0, incidents.length);
}

// This machine's CLOCK_MONOTONIC in ns (libuv's hrtime), the lab's clock.
const monotonicNs = () => Number(process.hrtime.bigint());

// Renewals not yet reported, in the order they were answered.
const renewals = [];

// One background renewal of `owner`'s lease on `lock` for `ttlMs`, sent and
// answered at monotonicNs() readings: ok = renewed, unknown = its answer was
// lost (neither: refused).
function renewed({ lock, owner, ttlMs, sentNs, answeredNs, ok, unknown = false }) {
  renewals.push({
    lock,
    owner,
    ttl_ms: Math.round(ttlMs),
    sent_ns: sentNs,
    answered_ns: answeredNs,
    ok: Boolean(ok),
    unknown: Boolean(unknown && !ok),
  });
}

// How long a request may take before the adapter answers "unknown" itself
// (plus the request's wait_ms): under the lab's 10 s reply timeout. A library
// whose own retries outlast it (e.g. a release retried 10 times through a
// partition) goes on in the background; its result is then ignored.
const DEADLINE_MS = 8000;

// "<name> <version>" of a package installed in ./node_modules, as its
// package.json says (the folder may be an npm alias such as redlock-v4: the
// name is the package's own). A leading "v" (redlock 5's package.json says
// "v5.0.0-beta.2") is dropped, as npm itself normalises it.
function versionOf(folder) {
  const file = path.join(__dirname, 'node_modules', folder, 'package.json');
  const { name, version } = JSON.parse(fs.readFileSync(file, 'utf8'));
  return `${name} ${String(version).replace(/^v(?=\d)/, '')}`;
}

// The hello handler: the name the lab's results and stories call the library
// by, its installed version, and what it can do. No library here is
// re-entrant as the lab counts it, or hands out fencing tokens; `steps` (the
// steps it announces) and `renews` (it renews in the background and answers
// `held`) are left out of the answer unless given.
function hello({ name, version, steps, renews, renewals: reported }) {
  return () => ({
    ok: true,
    name,
    version,
    reentrant: false,
    fencing: false,
    ...(steps ? { steps } : {}),
    ...(renews ? { renews: true } : {}),
    ...(reported ? { renewals: true } : {}),
    // What it dates (renewals, an acquire's attempt_ns) is dated by this clock.
    monotonic_ns: monotonicNs(),
    incidents: true,
    // Every adapter here connects before the story's clock starts.
    connect: true,
  });
}

// "host:port,host:port" as endpoints.
function parseEndpoints(list) {
  return list.split(',').map((endpoint) => {
    const colon = endpoint.lastIndexOf(':');
    return { host: endpoint.slice(0, colon), port: Number(endpoint.slice(colon + 1)) };
  });
}

function endpointsFrom(argv) {
  const at = argv.indexOf('--redis');
  if (at < 0 || !argv[at + 1]) {
    console.error('usage: adapter --redis host:port[,host:port...]');
    process.exit(2);
  }
  return parseEndpoints(argv[at + 1]);
}

// How long a reset waits, once the clients are closed, for what their
// closing set off (a command in flight rejected, a library's callback
// logging it) before it clears the run's timers and forgets its incidents.
const SETTLE_MS = 50;

function run(adapter) {
  let endpoints = endpointsFrom(process.argv);
  let handlers = null; // the run's, from adapter(endpoints) at its hello
  const lines = [];
  let waiting = null;
  const input = readline.createInterface({ input: process.stdin, terminal: false });
  input.on('line', (line) => {
    if (!line.trim()) return;
    if (waiting) {
      const resolve = waiting;
      waiting = null;
      resolve(line);
    } else {
      lines.push(line);
    }
  });
  input.on('close', () => process.exit(0));
  const nextLine = () =>
    lines.length ? Promise.resolve(lines.shift()) : new Promise((resolve) => (waiting = resolve));
  const write = (object) => process.stdout.write(JSON.stringify(object) + '\n');

  async function handle(request) {
    const op = request.op;
    if (op === 'hello') {
      if (request.redis) endpoints = parseEndpoints(request.redis);
      if (!handlers) handlers = adapter(endpoints);
      helloAt = process.hrtime.bigint();
      return { ...handlers.hello(), ...(handlers.close ? { reusable: true } : {}) };
    }
    if (!handlers) return { ok: false, error: `${op} before hello` };
    if (op === 'incidents' || op === 'renewals') return { ok: true };
    if (op === 'reset') return reset();
    if (op === 'connect') return handlers.connect ? handlers.connect(request) : { ok: true };
    const handler = handlers[op];
    if (!handler) return { ok: false, error: `unknown op ${JSON.stringify(op)}` };

    let live = true; // false once the deadline answered for this request
    let timer;
    let resolveLate;
    const late = new Promise((resolve) => (resolveLate = resolve));
    const arm = (ms) => {
      timer = node.setTimeout(() => {
        live = false;
        resolveLate({
          ok: false,
          unknown: true,
          error: `the library did not answer within ${ms} ms; its call goes on in the background`,
        });
      }, ms);
    };
    const budget = DEADLINE_MS + (Number(request.wait_ms) || 0);
    let started = Date.now();
    let spent = 0;
    const ctx = {
      endpoints,
      get live() {
        return live;
      },
      async step(name) {
        if (!live) return; // the request was already answered
        node.clearTimeout(timer); // time at a step does not count, for the lab either
        spent += Date.now() - started;
        write({ id: request.id, step: name });
        const line = await nextLine();
        const reply = JSON.parse(line);
        if (reply.op !== 'continue' || reply.id !== request.id)
          throw new Error(`expected {"id":${request.id},"op":"continue"}, got ${line}`);
        started = Date.now();
        arm(Math.max(0, budget - spent));
      },
    };
    arm(budget);
    try {
      return await Promise.race([handler(request, ctx), late]);
    } catch (error) {
      // A handler maps the errors it knows; anything else may have happened
      // after a command was sent.
      return { ok: false, unknown: true, error: `adapter: ${error && error.message}` };
    } finally {
      live = false;
      node.clearTimeout(timer);
    }
  }

  // The run is over (PROTOCOL.md, "Kept between runs"): its clients closed,
  // its timers cleared, its incidents and renewals forgotten; the next
  // hello builds the next run's.
  async function reset() {
    if (!handlers.close) return { ok: false, error: 'this adapter cannot close its clients: it is not reusable' };
    let timer;
    const late = new Promise((resolve) => (timer = node.setTimeout(resolve, DEADLINE_MS, 'late')));
    try {
      if ((await Promise.race([handlers.close(), late])) === 'late')
        return { ok: false, error: `the library's clients did not close within ${DEADLINE_MS} ms` };
    } catch (error) {
      return { ok: false, error: `could not close the library's clients: ${error && error.message}` };
    } finally {
      node.clearTimeout(timer);
    }
    await new Promise((resolve) => node.setTimeout(resolve, SETTLE_MS));
    clearRunTimers();
    handlers = null;
    takeIncidents();
    renewals.splice(0, renewals.length);
    console.error('reset: the run is over');
    return { ok: true };
  }

  (async () => {
    for (;;) {
      const line = await nextLine();
      const request = JSON.parse(line);
      const response = await handle(request);
      const left = takeIncidents();
      const renewed = renewals.splice(0, renewals.length);
      write({
        id: request.id,
        ...response,
        ...(left.length ? { incidents: left } : {}),
        ...(renewed.length || request.op === 'renewals' ? { renewals: renewed } : {}),
      });
    }
  })().catch((error) => {
    console.error('adapter protocol error:', error);
    process.exit(3);
  });
}

module.exports = { run, hello, endpointsFrom, versionOf, renewed, monotonicNs };
