#!/usr/bin/python3
"""A test adapter kept between runs (PROTOCOL.md, "Kept between runs"): SET
NX PX, tried every 10 ms for wait_ms, and a compare-and-delete on its one
endpoint; it answers "reset" by closing its connection, and takes the
endpoints of a hello's "redis" for the next run. Each hello logs "pid PID
serves HOST:PORT" to stderr. With --not-reusable its hello does not say
"reusable"; with --refuse-reset it answers the reset ok:false."""
import argparse
import os
import sys
import time
import uuid

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scripted import endpoint, first_endpoint, requests, send  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--redis", required=True)
parser.add_argument("--not-reusable", action="store_true")
parser.add_argument("--refuse-reset", action="store_true")
args = parser.parse_args()
host, port = endpoint(args)
client = None

for rid, op, request in requests():
    if op == "hello":
        if "redis" in request:
            host, port = first_endpoint(request["redis"])
        print(f"pid {os.getpid()} serves {host}:{port}", file=sys.stderr, flush=True)
        send({"id": rid, "ok": True, "name": "reusable-lock", "connect": True,
              "reusable": not args.not_reusable})
    elif op == "connect":
        client = redis.Redis(host=host, port=port, socket_timeout=1.0)
        client.ping()
        send({"id": rid, "ok": True})
    elif op == "acquire":
        owner = uuid.uuid4().hex
        deadline = time.monotonic() + request["wait_ms"] / 1000
        while not client.set(request["lock"], owner, nx=True, px=request["ttl_ms"]):
            if time.monotonic() >= deadline:
                send({"id": rid, "ok": False, "error": "held"})
                break
            time.sleep(0.01)
        else:
            send({"id": rid, "ok": True, "owner": owner})
    elif op == "release":
        script = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
        done = client.eval(script, 1, request["lock"], request["owner"])
        send({"id": rid, "ok": bool(done), "error": "not held"})
    elif op == "reset":
        if args.refuse_reset:
            send({"id": rid, "ok": False, "error": "cannot close"})
            continue
        client.close()
        client = None
        print("reset", file=sys.stderr, flush=True)
        send({"id": rid, "ok": True})
    else:
        send({"id": rid, "ok": False, "error": "not supported"})
