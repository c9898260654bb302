#!/usr/bin/env python3
"""Checks the "reset" op of every adapter of a runtime that says hello with
"reusable" (harness/adapter/PROTOCOL.md, "Kept between runs"), against two
real redis-server processes of its own on loopback: the adapter locks and
unlocks on servers A (after a connect that leaves no key: a warm-up lock
is released), takes the lock again and is reset while it holds it
(a story may end with its client holding), and must then have no
connection left to A (its clients, timers and watchdogs closed); the next
hello names servers B, a lock and an unlock must work there, and once a
renewing library would have renewed the lease held on A, the run on B must
report no incident and no renewal of it: nothing of A's run is left.

usage: check_reset.py PROJECT_DIR RUNTIME

A runtime none of whose adapters says "reusable" is a failure, never a pass.
"""
import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import time

import redis

LIBRARIES = "lock_impls/libraries"


def fail(message):
    print("check_reset: " + message, file=sys.stderr)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A redis-server of its own on a free loopback port, stopped by pid."""

    def __init__(self, directory):
        self.port = free_port()
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no", "--dir", directory],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                # One connection, so that its id is the checker's only one.
                self.client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2,
                                          single_connection_client=True)
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        self.stop()
        fail(f"redis-server on port {self.port} did not start")

    def others(self):
        """The connections other than this checker's own."""
        own = self.client.client_id()
        return [c for c in self.client.client_list() if int(c["id"]) != own]

    def stop(self):
        self.process.kill()
        self.process.wait()


class Adapter:
    """One adapter process, asked one request at a time."""

    def __init__(self, command, directory, endpoints, log):
        self.process = subprocess.Popen(
            ["/bin/sh", "-c", "exec " + command + " --redis " + shlex.quote(endpoints)],
            cwd=directory, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            text=True, env=dict(os.environ, LOCKLAB_JAVA_SHARE=os.environ.get("LOCKLAB_JAVA_SHARE", "auto")))
        self.next_id = 1

    def ask(self, request):
        request = dict(request, id=self.next_id)
        self.next_id += 1
        self.send(request)
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the adapter ended before answering {request['op']}")
            answer = json.loads(line)
            if "step" not in answer:
                return answer
            # A step it announces (PROTOCOL.md, "Steps"): go on at once.
            self.send({"id": request["id"], "op": "continue"})

    def send(self, request):
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()

    def stop(self):
        try:
            self.process.stdin.close()
            self.process.wait(timeout=5)
        except Exception:  # noqa: BLE001 - it is killed below either way
            self.process.kill()
            self.process.wait()


def lock_and_unlock(adapter, what):
    acquired = adapter.ask({"op": "acquire", "lock": "L", "ttl_ms": 2000, "wait_ms": 0})
    if not acquired.get("ok"):
        raise RuntimeError(f"acquire on {what} answered {acquired}")
    released = adapter.ask({"op": "release", "lock": "L", "owner": acquired["owner"]})
    if not released.get("ok"):
        raise RuntimeError(f"release on {what} answered {released}")


# Long enough for every library's background work on a 2 s lease to have
# come due (a watchdog renews at a third of the lease, node-redlock's
# using() 0.5 s before it ends).
QUIET_S = 2.0


def endpoints(servers):
    return ",".join(f"127.0.0.1:{server.port}" for server in servers)


def still_open(servers):
    """The connections left on `servers` a second after a reset answered:
    the close may reach a server a moment after the answer reaches us."""
    deadline = time.monotonic() + 1
    while True:
        left = [c for server in servers for c in server.others()]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def check(entry, project, a, b, log):
    """A and B: three servers each, for the adapters that lock on several
    masters (one that works on one server takes the first)."""
    adapter = Adapter(entry["adapter"], os.path.join(project, LIBRARIES), endpoints(a), log)
    try:
        hello = adapter.ask({"op": "hello"})
        if not hello.get("reusable"):
            return None
        for servers, what in ((a, "servers A"), (b, "servers B")):
            if servers is b:
                hello = adapter.ask({"op": "hello", "redis": endpoints(b)})
                if not hello.get("ok"):
                    raise RuntimeError(f"hello naming servers B answered {hello}")
            if hello.get("connect"):
                connected = adapter.ask({"op": "connect", "ttl_ms": 2000})
                if not connected.get("ok"):
                    raise RuntimeError(f"connect to {what} answered {connected}")
                # A warm-up lock taken at connect is released before the story.
                keys = {key.decode() for server in servers for key in server.client.keys()}
                if keys:
                    raise RuntimeError(f"connect to {what} left keys behind: {sorted(keys)}")
            lock_and_unlock(adapter, what)
            if servers is a:
                held = adapter.ask({"op": "acquire", "lock": "L", "ttl_ms": 2000, "wait_ms": 0})
                if not held.get("ok"):
                    raise RuntimeError(f"the second acquire on {what} answered {held}")
            else:
                time.sleep(QUIET_S)
                left_over(adapter, hello, held["owner"])
            reset = adapter.ask({"op": "reset"})
            if not reset.get("ok"):
                raise RuntimeError(f"reset after {what} answered {reset}")
            left = still_open(servers)
            if left:
                raise RuntimeError(f"a second after the reset, {len(left)} connection(s) to {what} "
                                   "are still open: " + ", ".join(c["addr"] + " " + c["cmd"] for c in left))
        return True
    finally:
        adapter.stop()


def left_over(adapter, hello, owner):
    """Fails when the run on B reports an incident, or a renewal of the lease
    the run on A held when it was reset."""
    if hello.get("incidents"):
        answer = adapter.ask({"op": "incidents"})
        if answer.get("incidents"):
            raise RuntimeError(f"after a reset, the next run reported incidents: {answer['incidents']}")
    if hello.get("renewals"):
        answer = adapter.ask({"op": "renewals"})
        stray = [r for r in answer.get("renewals", []) if r.get("owner") == owner]
        if stray:
            raise RuntimeError(f"after a reset, the next run reported renewals of the lease held before it: {stray}")


def runtime_of(command):
    first = shlex.split(command)[0]
    if first == "node":
        return "node"
    if first.startswith("java/"):
        return "java"
    if first.startswith("go/"):
        return "go"
    if first.startswith("rust/"):
        return "rust"
    return "python"


def main():
    if len(sys.argv) != 3:
        fail("usage: check_reset.py PROJECT_DIR RUNTIME")
    project, runtime = sys.argv[1], sys.argv[2]
    with open(os.path.join(project, LIBRARIES, "libraries.json")) as f:
        entries = [e for e in json.load(f)["libraries"] if runtime_of(e["adapter"]) == runtime]
    failures, reusable = [], 0
    with tempfile.TemporaryDirectory(prefix="check-reset-") as directory:
        servers = []
        try:
            for _ in range(6):
                servers.append(Server(directory))
            a, b = servers[:3], servers[3:]
            for entry in entries:
                log_path = os.path.join(directory, "adapter.stderr")
                with open(log_path, "w") as log:
                    try:
                        checked = check(entry, project, a, b, log)
                    except (RuntimeError, OSError, ValueError) as e:
                        with open(log_path) as written:
                            last = (written.read().strip().splitlines() or [""])[-1]
                        failures.append(f"{entry['adapter']}: {e} (last stderr line: {last})")
                        checked = False
                    finally:
                        for server in servers:
                            server.client.flushall()
                if checked:
                    reusable += 1
                    print(f"{entry['adapter']}: reset while holding the lock, it closed every "
                          "connection, and the next run, on the next hello's servers, found "
                          "nothing of it")
        finally:
            for server in servers:
                server.stop()
    if failures:
        fail("\n".join(failures))
    if reusable == 0:
        fail(f"no adapter of {runtime} says hello with \"reusable\"")
    print(f"check_reset: {reusable} adapter(s) of {runtime} reset as the protocol says")


if __name__ == "__main__":
    main()
