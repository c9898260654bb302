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
stops = {}  # owner -> its Lease, while held


class Lease:
    """One lease's renewals: every ttl/3 by its thread, until released or a
    renewal fails. A renewal overdue when the release comes (its timer fired
    during a pause) is made before the release, by whichever of the thread
    and the release gets `mutex` first, and only once: what the library does
    after a pause never depends on which of its threads runs first."""

    def __init__(self, lock, owner, ttl_ms):
        self.lock, self.owner, self.ttl_ms = lock, owner, ttl_ms
        self.interval = ttl_ms / 3000.0
        self.next = time.monotonic() + self.interval
        self.mutex = threading.Lock()
        self.stop = threading.Event()
        self.dead = False
        self.renewer = redis.Redis(host=host, port=port, socket_timeout=1.0, socket_connect_timeout=1.0)

    def renew_once(self):
        """Renews now (the caller holds `mutex`) and reports it."""
        sent = time.monotonic_ns()
        ok = bool(self.renewer.eval(EXTEND, 1, self.lock, self.owner, self.ttl_ms))
        answered = time.monotonic_ns()
        if args.backwards:
            sent, answered = answered, sent
        with guard:
            reported.append({"lock": self.lock, "owner": self.owner, "ttl_ms": self.ttl_ms,
                             "sent_ns": sent, "answered_ns": answered, "ok": ok})
        self.next = time.monotonic() + self.interval
        self.dead = not ok

    def run(self):
        while not self.stop.wait(max(0.0, self.next - time.monotonic())):
            with self.mutex:
                if self.stop.is_set():
                    return
                self.renew_once()
                if self.dead:
                    return

    def release(self):
        with self.mutex:
            self.stop.set()
            if not self.dead and time.monotonic() >= self.next:
                self.renew_once()


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
            stops[owner] = Lease(request["lock"], owner, request["ttl_ms"])
            threading.Thread(target=stops[owner].run, daemon=True).start()
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
            stops.pop(request["owner"]).release()
        done = client.eval(RELEASE, 1, request["lock"], request["owner"])
        answer({"id": rid, "ok": bool(done), "error": "not held"})
    elif op == "renewals":
        answer({"id": rid, "ok": True})
    else:
        answer({"id": rid, "ok": False, "error": "not supported"})
