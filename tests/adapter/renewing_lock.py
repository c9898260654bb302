#!/usr/bin/python3
"""A test adapter for the protocol's newer requests: a lock that says it
renews in the background (hello "renews") and, with --lost, answers "held"
false once a lease is 50 ms old (its refresh found the lock gone); every
release answers unknown the first time it is asked, and records each
release request's cancel_after_ms on stderr."""
import argparse
import os
import sys
import time
import uuid

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scripted import endpoint, requests, send  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--redis", required=True)
parser.add_argument("--lost", action="store_true")
args = parser.parse_args()
host, port = endpoint(args)
client = redis.Redis(host=host, port=port, socket_timeout=1.0, socket_connect_timeout=1.0)
taken = {}  # owner -> when
asked = set()  # owners whose release was asked once


for rid, op, request in requests():
    if op == "hello":
        send({"id": rid, "ok": True, "name": "renewing-lock", "renews": True,
              "version": "renewing-lock 1.0"})
    elif op == "acquire":
        owner = uuid.uuid4().hex
        if client.set(request["lock"], owner, nx=True, px=request["ttl_ms"]):
            taken[owner] = time.monotonic()
            send({"id": rid, "ok": True, "owner": owner, "validity_ms": None})
        else:
            send({"id": rid, "ok": False, "error": "held"})
    elif op == "held":
        young = time.monotonic() - taken.get(request["owner"], 0) < 0.05
        send({"id": rid, "ok": True, "held": young or not args.lost})
    elif op == "release":
        print("release cancel_after_ms=%s" % request.get("cancel_after_ms"), file=sys.stderr,
              flush=True)
        if request["owner"] not in asked:
            asked.add(request["owner"])
            send({"id": rid, "ok": False, "unknown": True, "error": "cancelled"})
            continue
        script = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
        done = client.eval(script, 1, request["lock"], request["owner"])
        send({"id": rid, "ok": bool(done), "error": "not held"})
    else:
        send({"id": rid, "ok": False, "error": "not supported"})
