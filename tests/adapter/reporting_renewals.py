#!/usr/bin/python3
"""A test adapter whose library renews in the background and reports each
renewal (PROTOCOL.md, "Renewals"): SET NX PX to acquire (while the key is
held, it sleeps the key's PTTL + 50 ms and tries again, and reports the
winning SET's "attempt_ns"), then a thread per lease renews it every ttl/3
with a compare-and-PEXPIRE until it is released or a renewal fails.
--silent: says hello with "renews" but reports no renewal and no attempt (a
library that keeps both to itself). --no-attempt: reports the renewals but
no attempt_ns. --wrong-clock: says hello with a
"monotonic_ns" that is not CLOCK_MONOTONIC. --backwards: reports a renewal
answered before it was sent. --stale-attempt: an attempt_ns from before the
acquire was asked for."""
import argparse
import os
import sys
import threading
import time
import uuid

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scripted import endpoint, requests, send  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--redis", required=True)
parser.add_argument("--silent", action="store_true")
parser.add_argument("--no-attempt", action="store_true")
parser.add_argument("--wrong-clock", action="store_true")
parser.add_argument("--backwards", action="store_true")
parser.add_argument("--stale-attempt", action="store_true")
args = parser.parse_args()
host, port = endpoint(args)
client = redis.Redis(host=host, port=port, socket_timeout=1.0, socket_connect_timeout=1.0)
EXTEND = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
guard = threading.Lock()
reported = []  # renewals not yet sent to the lab
stops = {}  # owner -> the Event that ends its renewal thread


def renew(lock, owner, ttl_ms, stop):
    renewer = redis.Redis(host=host, port=port, socket_timeout=1.0, socket_connect_timeout=1.0)
    while not stop.wait(ttl_ms / 3000.0):
        sent = time.monotonic_ns()
        ok = bool(renewer.eval(EXTEND, 1, lock, owner, ttl_ms))
        answered = time.monotonic_ns()
        if args.backwards:
            sent, answered = answered, sent
        with guard:
            reported.append({"lock": lock, "owner": owner, "ttl_ms": ttl_ms, "sent_ns": sent,
                             "answered_ns": answered, "ok": ok})
        if not ok:
            return


def answer(message):
    if not args.silent:
        with guard:
            message["renewals"] = reported[:]
            del reported[:]
    send(message)


for rid, op, request in requests():
    if op == "hello":
        clock = time.monotonic_ns() + (10**12 if args.wrong_clock else 0)
        hello = {"id": rid, "ok": True, "name": "reporting-renewals", "renews": True}
        if not args.silent:
            hello.update({"renewals": True, "monotonic_ns": clock})
        send(hello)
    elif op == "acquire":
        owner = uuid.uuid4().hex
        deadline = time.monotonic() + request["wait_ms"] / 1000.0
        while True:
            sent = time.monotonic_ns()
            if client.set(request["lock"], owner, nx=True, px=request["ttl_ms"]):
                break
            left = client.pttl(request["lock"])
            if time.monotonic() + (max(left, 0) + 50) / 1000.0 > deadline:
                sent = None
                break
            time.sleep((max(left, 0) + 50) / 1000.0)
        if sent is not None:
            stops[owner] = threading.Event()
            threading.Thread(target=renew, daemon=True,
                             args=(request["lock"], owner, request["ttl_ms"], stops[owner])).start()
            won = {"id": rid, "ok": True, "owner": owner, "validity_ms": None}
            if not args.silent and not args.no_attempt:
                won["attempt_ns"] = sent - (10**10 if args.stale_attempt else 0)
            answer(won)
        else:
            answer({"id": rid, "ok": False, "error": "held"})
    elif op == "held":
        answer({"id": rid, "ok": True, "held": True})
    elif op == "release":
        if request["owner"] in stops:
            stops.pop(request["owner"]).set()
        done = client.eval(RELEASE, 1, request["lock"], request["owner"])
        answer({"id": rid, "ok": bool(done), "error": "not held"})
    elif op == "renewals":
        answer({"id": rid, "ok": True})
    else:
        answer({"id": rid, "ok": False, "error": "not supported"})
