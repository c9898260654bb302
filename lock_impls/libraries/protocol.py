"""The locklab adapter protocol (harness/adapter/PROTOCOL.md) for the Python
adapters: the --redis argument, the Redis connection's timeouts and
credentials, and the JSON-lines loop (one request per line on stdin, one
response per line on stdout with the request's id, flushed). Each adapter
only maps hello / acquire / release / extend to its library:

    host, port = protocol.first_endpoint(__doc__.splitlines()[0])
    client = redis.Redis(host=host, port=port, **protocol.connection_options())
    protocol.serve(handle)              # handle(request) -> response without "id"
    await protocol.serve_async(handle)  # the same on asyncio (handle is a coroutine)

An adapter kept between runs (PROTOCOL.md, "Kept between runs") builds its
library's clients per run instead, in an object of its own, and the helper
answers hello with "reusable" and the op "reset":

    protocol.run(HELLO, Adapter, args.redis)       # methods connect, acquire, ..., close
    await protocol.run_async(Adapter, args.redis)  # coroutines handle(request), close()

Adapter(endpoints) is built on [(host, port), ...]: the --redis argument's
for the first run, hello's "redis" after a reset. close() ends the run: it
stops the library's threads, timers and tasks and closes its connections
without releasing anything; reset then checks that none of the run's
threads (tasks, on asyncio) is left and forgets its incidents and renewals.

Two optional parts of the protocol, for an adapter that asks for them:
- connect: hello answers "connect": true (hello(..., connect=True)); the lab
  then sends {"op":"connect"} once before the story starts, and handle()
  opens its connections then. Without it, an adapter connects lazily.
- incidents: what a library left that an application on Python's defaults
  would have crashed on or never seen. watch_incidents() installs
  threading.excepthook and sys.unraisablehook (and, on asyncio, the loop's
  exception handler, e.g. "Task exception was never retrieved"); each is
  logged to stderr and attached to the next response as "incidents", and the
  op "incidents" is answered here with whatever is left. hello(...,
  incidents=True) tells the lab.

- renewals: an adapter that sees every renewal its library makes in the
  background says hello(..., renewals=True) and calls renewed() for each;
  respond() dates hello with this machine's CLOCK_MONOTONIC
  ("monotonic_ns"), attaches the renewals not yet reported to the next
  response as "renewals", and answers the op "renewals" with what is left.

Used by redis-py-asyncio/adapter.py and examples/adapters/redis_py_lock.py
(which finds it here, or beside a copy of itself), and by the adapters of
python/ (run in python/.venv).
"""
import argparse
import asyncio
import gc
import json
import os
import re
import sys
import threading
import time
import traceback


def arguments(description, flags=()):
    """--redis host:port[,host:port...] and the adapter's own --flags (each a
    boolean, e.g. a mode of the library)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--redis", required=True, help="host:port[,host:port...]")
    for flag in flags:
        parser.add_argument("--" + flag, action="store_true")
    return parser.parse_args()


def endpoints_of(redis_argument):
    """[(host, port), ...] of a --redis argument, node 0 first."""
    result = []
    for endpoint in redis_argument.split(","):
        host, port = endpoint.rsplit(":", 1)
        result.append((host, int(port)))
    return result


def first_endpoint(description):
    """The first host:port of --redis host:port[,host:port...]: these
    libraries work on one Redis server."""
    return endpoints_of(arguments(description).redis)[0]


def connection_options():
    """Short socket timeouts (redis-py waits for ever by default): a
    partitioned or paused server gives an unknown outcome within a second
    instead of a silent adapter. On a target with credentials the lab passes
    them in the environment."""
    return {"socket_timeout": 1.0, "socket_connect_timeout": 0.5,
            "username": os.environ.get("LOCKLAB_REDIS_USERNAME") or None,
            "password": os.environ.get("LOCKLAB_REDIS_PASSWORD") or None}


def hello(name, version, **capabilities):
    """The answer to hello: no adapter here is re-entrant or fences.
    capabilities: multi_node, renews, renewals, connect, incidents (booleans)."""
    response = {"ok": True, "name": name, "version": version, "reentrant": False, "fencing": False}
    response.update(capabilities)
    return response


def version_of(distribution):
    """The installed version of a distribution (its dist-info), for hello."""
    from importlib import metadata
    return "%s %s" % (distribution, metadata.version(distribution))


class _Incidents:
    """Incidents not yet reported, with the time since hello was answered."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pending = []
        self.watching = False
        self.since = time.monotonic()

    def record(self, kind, message, detail=""):
        message = " ".join(str(message).split())[:300] or kind
        at_ms = int((time.monotonic() - self.since) * 1000)
        sys.stderr.write("incident %s at %d ms: %s\n%s" % (kind, at_ms, message, detail.rstrip("\n") + "\n" if detail else ""))
        sys.stderr.flush()
        with self.lock:
            self.pending.append({"kind": kind, "message": message, "at_ms": at_ms})

    def drain(self):
        with self.lock:
            pending, self.pending = self.pending, []
        return pending


INCIDENTS = _Incidents()


class _Renewals:
    """Background renewals not yet reported, in the order they were answered."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pending = []

    def drain(self):
        with self.lock:
            pending, self.pending = self.pending, []
        return pending


RENEWALS = _Renewals()


def renewed(lock, owner, ttl_ms, sent_ns, answered_ns, ok, unknown=False):
    """Reports one background renewal of `owner`'s lease on `lock` (the
    lab's name) for `ttl_ms`: sent and answered at time.monotonic_ns()
    readings (CLOCK_MONOTONIC, the lab's clock); ok = renewed, unknown = its
    answer was lost (neither: refused). From any thread."""
    with RENEWALS.lock:
        RENEWALS.pending.append({"lock": lock, "owner": owner, "ttl_ms": int(ttl_ms),
                                 "sent_ns": int(sent_ns), "answered_ns": int(answered_ns),
                                 "ok": bool(ok), "unknown": bool(unknown and not ok)})


def _describe(exc_type, exc_value, where):
    name = getattr(exc_type, "__name__", str(exc_type))
    return "%s: %s: %s" % (where, name, exc_value) if str(exc_value) else "%s: %s" % (where, name)


def _thread_name(thread):
    """A thread's name without the number Python gives unnamed threads
    ("Thread-45 (_lock_renewer)" is "_lock_renewer"): the number counts the
    threads the process made before, so the same incident would read
    differently from run to run."""
    if thread is None:
        return "?"
    return re.sub(r"^Thread-\d+ \((.+)\)$", r"\1", thread.name)


def watch_incidents():
    """Records an uncaught exception in a thread (threading.excepthook) and
    an exception Python could not raise anywhere (sys.unraisablehook: in
    __del__, a finalizer, a callback), which Python's defaults only print."""
    INCIDENTS.watching = True

    def thread_hook(args):
        if args.exc_type is SystemExit:
            return
        where = "thread %s" % _thread_name(args.thread)
        INCIDENTS.record("uncaught-exception", _describe(args.exc_type, args.exc_value, where),
                         "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback)))

    def unraisable_hook(args):
        where = "unraisable (%s)" % (args.err_msg or "Exception ignored")
        if args.object is not None:
            where += " in %r" % (args.object,)
        INCIDENTS.record("uncaught-exception", _describe(args.exc_type, args.exc_value, where),
                         "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback)))

    threading.excepthook = thread_hook
    sys.unraisablehook = unraisable_hook


def watch_loop(loop):
    """The asyncio loop's exception handler: a task's exception never
    retrieved, an exception in a callback."""
    INCIDENTS.watching = True

    def handler(loop, context):
        error = context.get("exception")
        message = context.get("message", "asyncio")
        if error is not None:
            message = "%s: %s: %s" % (message, type(error).__name__, error)
        INCIDENTS.record("uncaught-exception", message,
                         "".join(traceback.format_exception(error)) if error is not None else "\n")

    loop.set_exception_handler(handler)


def unknown_op(op):
    return {"ok": False, "error": "unknown op %r" % op}


def respond(request, response):
    response["id"] = request["id"]
    if INCIDENTS.watching:
        incidents = INCIDENTS.drain()
        if request.get("op") == "incidents":
            response["incidents"] = response.get("incidents", []) + incidents
        elif incidents:
            response["incidents"] = incidents
    renewals = RENEWALS.drain()
    if renewals or request.get("op") == "renewals":
        response["renewals"] = response.get("renewals", []) + renewals
    if request.get("op") == "hello":
        response["monotonic_ns"] = time.monotonic_ns()
    sys.stdout.write(json.dumps(response) + "\n")
    sys.stdout.flush()
    if request.get("op") == "hello":
        INCIDENTS.since = time.monotonic()


def _answer_incidents(request):
    """The ops "incidents" and "renewals" (respond() adds what is left)."""
    if request.get("op") == "incidents" and INCIDENTS.watching:
        return {"ok": True, "incidents": []}
    if request.get("op") == "renewals":
        return {"ok": True, "renewals": []}
    return None


def serve(handle):
    """Answers each request with handle(request) until stdin closes."""
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        respond(request, _answer_incidents(request) or handle(request))


# The ops an adapter of run() answers with its method of the same name.
OPS = ("connect", "acquire", "release", "extend", "held")
# How long reset waits for the run's threads or tasks to end once the
# adapter closed, under the lab's reply timeout (10 s).
RESET_WAIT_S = 5.0


class _Runs:
    """The adapter of the current run: built on that run's endpoints at its
    first request (hello), closed by reset."""

    def __init__(self, adapter_of, redis):
        self.adapter_of = adapter_of
        self.endpoints = endpoints_of(redis)
        self.adapter = None

    def current(self, request):
        if request.get("op") == "hello" and request.get("redis"):
            self.endpoints = endpoints_of(request["redis"])
            sys.stderr.write("hello: a new run on %s\n" % request["redis"])
            sys.stderr.flush()
        if self.adapter is None:
            self.adapter = self.adapter_of(self.endpoints)
        return self.adapter

    def take(self):
        adapter, self.adapter = self.adapter, None
        return adapter


def threads_left(timeout):
    """The threads other than this one still running after up to `timeout`
    seconds of waiting for them to end."""
    deadline = time.monotonic() + timeout
    for thread in threading.enumerate():
        if thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
    return [t for t in threading.enumerate() if t is not threading.current_thread() and t.is_alive()]


async def tasks_left(timeout, ignore=lambda task: False):
    """The asyncio tasks other than this one (and those `ignore` picks)
    still running after up to `timeout` seconds of waiting for them to end."""
    deadline = time.monotonic() + timeout
    while True:
        left = [t for t in asyncio.all_tasks()
                if t is not asyncio.current_task() and not t.done() and not ignore(t)]
        if not left or time.monotonic() >= deadline:
            return left
        await asyncio.wait(left, timeout=deadline - time.monotonic())


def _end_of_run(error, left):
    """The answer to reset, once the run's adapter is closed: what its
    close() raised, or what of the run is still running, is an ok:false
    that makes the lab stop the process."""
    # What the run left for the garbage collector (a __del__ may touch the
    # library) is finalized now, not in the next run's time.
    gc.collect()
    INCIDENTS.drain()
    RENEWALS.drain()
    if error is None and left:
        error = "still running after close: " + ", ".join(left)
    sys.stderr.write("reset: the run is over%s\n" % ("" if error is None else ", not cleanly: " + error))
    sys.stderr.flush()
    if error is not None:
        return {"ok": False, "error": "could not close the library's clients: " + error}
    return {"ok": True}


def run(hello_answer, adapter_of, redis):
    """A whole synchronous adapter, kept between runs: hello answers
    `hello_answer` with "reusable", every op of OPS the method of that name
    of the run's adapter (adapter_of(endpoints), see the top of this file;
    an op it has no method for is unknown), reset its close(); incidents are
    watched, and the process ends when stdin closes, without the
    interpreter's shutdown (a library's threads may still be waiting)."""
    runs = _Runs(adapter_of, redis)

    def handle(request):
        op = request.get("op")
        if op == "reset":
            return reset()
        adapter = runs.current(request)
        if op == "hello":
            return dict(hello_answer, reusable=True)
        method = getattr(adapter, op, None) if op in OPS else None
        if method is None:
            return unknown_op(op)
        return method(request)

    def reset():
        error = None
        adapter = runs.take()
        if adapter is not None:
            try:
                adapter.close()
            except Exception as e:  # noqa: BLE001 - any failure is an unclean end
                error = _describe(type(e), e, "close")
        adapter = None  # for the garbage collector, in _end_of_run
        left = [thread.name for thread in threads_left(RESET_WAIT_S if error is None else 0)]
        return _end_of_run(error, left)

    watch_incidents()
    serve(handle)
    os._exit(0)


async def serve_async(handle):
    """Answers each request with await handle(request) until stdin closes.
    stdin is read in the loop's executor, so that the library's tasks run
    while the adapter waits for the next request."""
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        if not line.strip():
            continue
        request = json.loads(line)
        respond(request, _answer_incidents(request) or await handle(request))
    os._exit(0)  # do not wait for the executor's thread or the connection


async def run_async(adapter_of, redis):
    """A whole adapter on asyncio, kept between runs: each request but reset
    is answered by await adapter.handle(request) of the run's adapter
    (adapter_of(endpoints), see the top of this file), hello with
    "reusable" added; reset awaits its close()."""
    runs = _Runs(adapter_of, redis)

    async def handle(request):
        if request.get("op") == "reset":
            return await reset()
        response = await runs.current(request).handle(request)
        if request.get("op") == "hello" and response.get("ok"):
            response["reusable"] = True
        return response

    async def reset():
        error = None
        adapter = runs.take()
        if adapter is not None:
            try:
                await adapter.close()
            except Exception as e:  # noqa: BLE001 - any failure is an unclean end
                error = _describe(type(e), e, "close")
        adapter = None  # for the garbage collector, in _end_of_run
        left = await tasks_left(RESET_WAIT_S if error is None else 0)
        left = ["%s %r" % (task.get_name(), task.get_coro()) for task in left]
        return _end_of_run(error, left)

    await serve_async(handle)
