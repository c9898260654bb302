"""The locklab adapter protocol (harness/adapter/PROTOCOL.md) for the Python
adapters: the --redis argument, the Redis connection's timeouts and
credentials, and the JSON-lines loop (one request per line on stdin, one
response per line on stdout with the request's id, flushed). Each adapter
only maps hello / acquire / release / extend to its library:

    host, port = protocol.first_endpoint(__doc__.splitlines()[0])
    client = redis.Redis(host=host, port=port, **protocol.connection_options())
    protocol.serve(handle)              # handle(request) -> response without "id"
    await protocol.serve_async(handle)  # the same on asyncio (handle is a coroutine)

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
import json
import os
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


def watch_incidents():
    """Records an uncaught exception in a thread (threading.excepthook) and
    an exception Python could not raise anywhere (sys.unraisablehook: in
    __del__, a finalizer, a callback), which Python's defaults only print."""
    INCIDENTS.watching = True

    def thread_hook(args):
        if args.exc_type is SystemExit:
            return
        where = "thread %s" % (args.thread.name if args.thread else "?")
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


def run(hello_answer, handlers):
    """A whole synchronous adapter: hello answers `hello_answer`, every other
    op its function in `handlers` (op -> handler(request) -> response),
    incidents are watched, and the process ends when stdin closes, without
    the interpreter's shutdown (a library's threads may still be waiting)."""
    def handle(request):
        op = request.get("op")
        if op == "hello":
            return dict(hello_answer)
        if op not in handlers:
            return unknown_op(op)
        return handlers[op](request)

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
