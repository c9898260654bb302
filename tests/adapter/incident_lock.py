#!/usr/bin/python3
"""A test adapter for "connect" and "incidents" (PROTOCOL.md): it asks for
connect in hello and opens its Redis connection only then (an acquire before
it is a failure it reports on stderr); its first acquire's answer carries an
unhandled rejection dated at hello, and the end-of-run "incidents"
request returns an uncaught exception. With --refuse-connect, connect
answers ok:false; with --bad-incident, the first incident has no kind."""
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
parser.add_argument("--refuse-connect", action="store_true")
parser.add_argument("--bad-incident", action="store_true")
args = parser.parse_args()
host, port = endpoint(args)
client = None
hello_at = None
first = True


for rid, op, request in requests():
    if op == "hello":
        hello_at = time.monotonic()
        send({"id": rid, "ok": True, "name": "incident-lock", "connect": True, "incidents": True})
    elif op == "connect":
        if args.refuse_connect:
            send({"id": rid, "ok": False, "error": "Connection refused"})
            continue
        client = redis.Redis(host=host, port=port, socket_timeout=1.0)
        client.ping()
        print(f"connected for a lease of {request.get('ttl_ms')} ms", file=sys.stderr, flush=True)
        send({"id": rid, "ok": True})
    elif op == "acquire":
        if client is None:
            print("acquire before connect", file=sys.stderr, flush=True)
            send({"id": rid, "ok": False, "error": "not connected"})
            continue
        owner = uuid.uuid4().hex
        response = {"id": rid, "ok": False, "error": "held"}
        if client.set(request["lock"], owner, nx=True, px=request["ttl_ms"]):
            response = {"id": rid, "ok": True, "owner": owner}
        if first:
            first = False
            incident = {"message": "refresh failed: Connection is closed.", "at_ms": 0.0}
            if not args.bad_incident:
                incident["kind"] = "unhandled-rejection"
            response["incidents"] = [incident]
        send(response)
    elif op == "release":
        script = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
        done = client.eval(script, 1, request["lock"], request["owner"])
        send({"id": rid, "ok": bool(done), "error": "not held"})
    elif op == "incidents":
        at = (time.monotonic() - hello_at) * 1000.0
        send({"id": rid, "ok": True, "incidents": [
            {"kind": "uncaught-exception", "message": "Thread-1 died: TimeoutError", "at_ms": at}]})
    else:
        send({"id": rid, "ok": False, "error": "not supported"})
