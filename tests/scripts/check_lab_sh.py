#!/usr/bin/env python3
"""harness/scripts/lab.sh suite, checked in a tree of its own.

The real lab.sh runs against a stand-in project: a CMake project whose
`locklab` target does nothing and whose default target fails (so building
more than locklab fails the run), no Debian packages to install, no
libraries, and a stand-in build/locklab, a shell script that logs what it
was asked and when. Each check names what lab.sh promises: the envelopes
after the stories, never beside them (their bounds are timings), the report
after both, the worse status of the two, no envelopes after a usage error
of the suite, and Ctrl-C ending the job whichever part it is in.

usage: check_lab_sh.py PROJECT_ROOT
"""
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STAND_IN = r"""#!/usr/bin/env bash
# A stand-in for locklab: logs "<command> <event> <pid>" to $FAKE_LOG and,
# as locklab does, ends its work on SIGINT or SIGTERM and exits 128 + it.
log() { echo "$1 $2 $$" >>"$FAKE_LOG"; }
command=$1
trap 'log "$command" interrupted; kill $! 2>/dev/null; exit 130' INT TERM
case "$command" in
  suite)
    log suite start
    # The envelopes must not start while the stories run.
    saw=alone
    for _ in $(seq 10); do
      if grep -q '^envelope start' "$FAKE_LOG"; then saw=beside; break; fi
      sleep 0.1
    done
    log suite "$saw"
    sleep "${FAKE_SUITE_SECONDS:-0}" &
    wait $!
    mkdir -p results && echo '{}' >results/results.json
    log suite end
    exit "${FAKE_SUITE_STATUS:-0}"
    ;;
  envelope)
    log envelope start
    sleep "${FAKE_ENVELOPE_SECONDS:-0}" &
    wait $!
    log envelope end
    exit "${FAKE_ENVELOPE_STATUS:-0}"
    ;;
  report)
    log report start
    ;;
esac
"""

CMAKE = """cmake_minimum_required(VERSION 3.20)
project(stand_in NONE)
add_custom_target(locklab COMMAND true)
add_custom_target(everything_else ALL COMMAND false)
"""

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def make_tree(root: Path, work: Path) -> Path:
    tree = work / "tree"
    (tree / "harness/scripts").mkdir(parents=True)
    shutil.copy(root / "harness/scripts/lab.sh", tree / "harness/scripts/lab.sh")
    (tree / "harness/scripts/packages.txt").write_text("# none\n")
    libraries = tree / "lock_impls/libraries"
    (libraries / "node_modules").mkdir(parents=True)
    (libraries / "package-lock.json").write_text("{}\n")
    stamp = hashlib.sha256(b"{}\n").hexdigest()
    (libraries / "node_modules/.locklab-installed").write_text(stamp + "\n")
    (tree / "CMakeLists.txt").write_text(CMAKE)
    # Configured once, as by an earlier lab.sh; its `locklab` target leaves
    # the stand-in in place.
    build = tree / "build"
    subprocess.run(["cmake", "-S", tree, "-B", build, "-G", "Ninja"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (build / "locklab").write_text(STAND_IN)
    (build / "locklab").chmod(0o755)
    return tree


def run_suite(tree: Path, args=(), env_extra=None, interrupt_after=None):
    """Runs lab.sh suite ARGS in TREE; returns (status, log lines, seconds)."""
    log = tree / "log"
    log.write_text("")
    shutil.rmtree(tree / "results", ignore_errors=True)
    env = dict(os.environ, FAKE_LOG=str(log), **(env_extra or {}))
    started = time.monotonic()
    lab = subprocess.Popen(["bash", tree / "harness/scripts/lab.sh", "suite", *args], cwd=tree,
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           start_new_session=True)
    if interrupt_after:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and interrupt_after not in log.read_text():
            time.sleep(0.05)
        # As a terminal's Ctrl-C: to lab.sh's whole foreground group.
        os.killpg(lab.pid, signal.SIGINT)
    try:
        _, stderr = lab.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(lab.pid, signal.SIGKILL)
        raise
    lines = log.read_text().split("\n")
    if lab.returncode not in (0, 1, 2, 130):
        print(stderr.decode(errors="replace"), file=sys.stderr)
    return lab.returncode, [line for line in lines if line], time.monotonic() - started


def events(lines):
    return [" ".join(line.split()[:2]) for line in lines]


def alive(lines, command):
    pids = {int(line.split()[2]) for line in lines if line.startswith(command + " ")}
    living = []
    for pid in pids:
        try:
            os.kill(pid, 0)
            living.append(pid)
        except ProcessLookupError:
            pass
    return living


def main():
    root = Path(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="lab-sh-") as work:
        tree = make_tree(root, Path(work))

        status, lines, _ = run_suite(tree)
        seen = events(lines)
        check(status == 0, f"both succeed: lab.sh exits {status}, not 0 (did it build more than locklab?)")
        check(seen == ["suite start", "suite alone", "suite end", "envelope start", "envelope end",
                       "report start"],
              f"not the stories, then the envelopes, then the report: {seen}")

        status, lines, _ = run_suite(tree, env_extra={"FAKE_ENVELOPE_STATUS": "1"})
        check(status == 1, f"an envelope that disagrees: lab.sh exits {status}, not 1")
        check("report start" in events(lines), "an envelope that disagrees: no report written")

        status, lines, _ = run_suite(tree, env_extra={"FAKE_SUITE_STATUS": "1"})
        check(status == 1 and "envelope end" in events(lines),
              f"a story not met: lab.sh exits {status}, not 1, or measures no envelopes")

        status, lines, _ = run_suite(tree, ["--no-envelope"])
        seen = events(lines)
        check(status == 0 and "envelope start" not in seen and "report start" in seen,
              f"--no-envelope: status {status}, {seen}")

        status, lines, _ = run_suite(tree, env_extra={"FAKE_SUITE_STATUS": "2"})
        seen = events(lines)
        check(status == 2, f"a usage error of the suite: lab.sh exits {status}, not 2")
        check("envelope start" not in seen and "report start" not in seen,
              f"a usage error of the suite: envelopes measured or a report written: {seen}")

        for part in ("suite", "envelope"):
            status, lines, _ = run_suite(
                tree, env_extra={"FAKE_SUITE_SECONDS": "0", "FAKE_ENVELOPE_SECONDS": "0",
                                 f"FAKE_{part.upper()}_SECONDS": "60"},
                interrupt_after=f"{part} start")
            seen = events(lines)
            check(status == 130, f"Ctrl-C in the {part}: lab.sh exits {status}, not 130")
            check(f"{part} interrupted" in seen, f"Ctrl-C in the {part}: it was not ended: {seen}")
            check(seen[-1:] == [f"{part} interrupted"],
                  f"Ctrl-C in the {part}: lab.sh went on after it: {seen}")
            check(not alive(lines, part), f"Ctrl-C in the {part}: it outlives lab.sh")

    for failure in failures:
        print("lab.sh suite: " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
