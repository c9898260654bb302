"""The locklab adapter protocol (harness/adapter/PROTOCOL.md) for the Python
adapters: the --redis argument, the Redis connection's timeouts and
credentials, and the JSON-lines loop (one request per line on stdin, one
response per line on stdout with the request's id, flushed). Each adapter
only maps hello / acquire / release / extend to its library:

    host, port = protocol.first_endpoint(__doc__.splitlines()[0])
    client = redis.Redis(host=host, port=port, **protocol.connection_options())
    protocol.serve(handle)              # handle(request) -> response without "id"
    await protocol.serve_async(handle)  # the same on asyncio (handle is a coroutine)

Used by redis-py-asyncio/adapter.py and examples/adapters/redis_py_lock.py
(which finds it here, or beside a copy of itself).
"""
import argparse
import asyncio
import json
import os
import sys


def first_endpoint(description):
    """The first host:port of --redis host:port[,host:port...]: these
    libraries work on one Redis server."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--redis", required=True, help="host:port[,host:port...]")
    args = parser.parse_args()
    host, port = args.redis.split(",")[0].rsplit(":", 1)
    return host, int(port)


def connection_options():
    """Short socket timeouts (redis-py waits for ever by default): a
    partitioned or paused server gives an unknown outcome within a second
    instead of a silent adapter. On a target with credentials the lab passes
    them in the environment."""
    return {"socket_timeout": 1.0, "socket_connect_timeout": 0.5,
            "username": os.environ.get("LOCKLAB_REDIS_USERNAME") or None,
            "password": os.environ.get("LOCKLAB_REDIS_PASSWORD") or None}


def hello(name, version):
    """The answer to hello: neither adapter is re-entrant or fences."""
    return {"ok": True, "name": name, "version": version, "reentrant": False, "fencing": False}


def unknown_op(op):
    return {"ok": False, "error": "unknown op %r" % op}


def respond(request, response):
    response["id"] = request["id"]
    sys.stdout.write(json.dumps(response) + "\n")
    sys.stdout.flush()


def serve(handle):
    """Answers each request with handle(request) until stdin closes."""
    for line in sys.stdin:
        request = json.loads(line)
        respond(request, handle(request))


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
        respond(request, await handle(request))
    os._exit(0)  # do not wait for the executor's thread or the connection
