#!/usr/bin/python3
"""A test adapter that announces a step inside acquire (PROTOCOL.md, "Steps"):
SET NX PX, then {"id": N, "step": "after-send"}, wait for the lab's
"continue", then answer. With --undeclared it announces a step its hello
did not declare (a protocol error the lab must name)."""
import argparse
import json
import os
import sys
import uuid

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scripted import endpoint, requests, send  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--redis", required=True)
parser.add_argument("--undeclared", action="store_true")
args = parser.parse_args()
host, port = endpoint(args)
client = redis.Redis(host=host, port=port, socket_timeout=1.0, socket_connect_timeout=1.0)


for rid, op, request in requests():
    if op == "hello":
        send({"id": rid, "ok": True, "name": "announces-steps", "steps": ["after-send"]})
        continue
    try:
        if op == "acquire":
            owner = uuid.uuid4().hex
            took = client.set(request["lock"], owner, nx=True, px=request["ttl_ms"])
            send({"id": rid, "step": "after-sned" if args.undeclared else "after-send"})
            answer = json.loads(sys.stdin.readline())
            if answer != {"id": rid, "op": "continue"}:
                sys.exit("expected continue, got %r" % (answer,))
            send({"id": rid, "ok": True, "owner": owner} if took
                 else {"id": rid, "ok": False, "error": "held"})
        elif op == "release":
            script = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
            done = client.eval(script, 1, request["lock"], request["owner"])
            send({"id": rid, "ok": bool(done)})
        else:
            send({"id": rid, "ok": False, "error": "not supported"})
    except redis.RedisError as error:
        send({"id": rid, "ok": False, "unknown": True, "error": str(error)})
