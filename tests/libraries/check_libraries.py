#!/usr/bin/env python3
"""Runs every library of lock_impls/libraries/libraries.json through two
controls, and every story that writes its own expectation for a library
through that library, with real redis-server processes, and checks what the
comparison relies on:

- every cell met its expectation (or was safer than the built-in it stands
  in for, or not applicable with its reason);
- each library is a column with the version its adapter announced;
- every library holds with no faults and breaks when paused past its lease,
  each overlap classified as the overrun it is (the adapter reports what the
  history needs to tell: its winning try, its renewals);
- each published bug is measured where its story says: the cells a story
  expects violated were violated, with the kinds it names.

usage: check_libraries.py LOCKLAB PROJECT_DIR [RUNTIME]

RUNTIME (node, python, java, go or rust) keeps the libraries whose adapters
run on it, so that each runtime's libraries are a test of their own; a
runtime with no library is a failure, never a pass.

The tests' tier: a library story is run here only for the libraries it names
(their published bugs, measured where the story says). Every library against
every story, each held to its `like` built-in where no story names it, is
the comparison's (`harness/scripts/lab.sh suite`), which takes an hour.
"""
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

STORIES = "scenarios/libraries"
CONTROLS = ["scenarios/no-faults.json", "scenarios/pause-longer-than-lease.json"]


# The runs' output directory while the checks read it: kept when a check
# fails, so that the histories behind the failure can be read.
KEPT = []


def fail(message):
    print(f"check_libraries: {message}", file=sys.stderr)
    for directory in KEPT:
        print(f"check_libraries: the runs' histories are kept in {directory}", file=sys.stderr)
    sys.exit(1)


def hello_name(command, directory):
    """The name an adapter answers hello with (the name the suite's columns
    and -a use). It needs no server for hello; the address given is never
    listened on. Every adapter here must say hello with `connect`: its
    connections are then open when the story's clock starts, as an
    application's are, and a fault at the story's first instant finds them
    open instead of half-made."""
    adapter = subprocess.Popen(shlex.split(command) + ["--redis", "127.0.0.1:9"], cwd=directory,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    try:
        answer, _ = adapter.communicate('{"id": 1, "op": "hello"}\n', timeout=20)
    except subprocess.TimeoutExpired:
        adapter.kill()
        adapter.communicate()
        fail(f"{command}: no answer to hello within 20 s")
    for line in answer.splitlines():
        response = json.loads(line)
        if response.get("id") == 1 and response.get("name"):
            if response.get("connect") is not True:
                fail(f"{command}: hello does not say \"connect\": true, so its connections "
                     "would be opened inside the story (harness/adapter/PROTOCOL.md, Connecting)")
            return response["name"]
    fail(f"{command}: hello answered {answer!r}")


RUNTIMES = ["node", "python", "java", "go", "rust"]

# Renewals whose outcome a story's why tells: (story, library) -> (the
# client, the type of the renewed event it must record). In
# redsync-setnx-on-extend c1's overdue Extend finds no value of its own on
# any master: refused without WithSetNXOnExtend, taken again with it.
RENEWALS = {
    ("redsync-setnx-on-extend", "redsync-watchdog"): ("c1", "fail"),
    ("redsync-setnx-on-extend", "redsync-watchdog-setnx-on-extend"): ("c1", "ok"),
}


def runtime_of(command):
    """The runtime an adapter command runs on: its program (node, java, a
    python), or the folder its built program lives in (go/bin/…, rust/target/…)."""
    program = shlex.split(command)[0]
    name = os.path.basename(program)
    if name in ("node", "java"):
        return name
    if name.startswith("python"):
        return "python"
    return program.split("/")[0]


def main():
    locklab, project = sys.argv[1], sys.argv[2]
    runtime = sys.argv[3] if len(sys.argv) > 3 else None
    if runtime is not None and runtime not in RUNTIMES:
        fail(f"unknown runtime {runtime!r} (one of {', '.join(RUNTIMES)})")
    libraries_file = os.path.join(project, "lock_impls/libraries/libraries.json")
    if not os.path.isdir(os.path.join(project, "lock_impls/libraries/node_modules")):
        fail("lock_impls/libraries/node_modules is missing: run harness/scripts/lab.sh setup (npm ci)")
    directory = os.path.dirname(libraries_file)
    entries = [entry for entry in json.load(open(libraries_file))["libraries"]
               if runtime is None or runtime_of(entry["adapter"]) == runtime]
    if not entries:
        fail(f"no library of libraries.json runs on {runtime}")
    libraries = [hello_name(entry["adapter"], directory) for entry in entries]
    # The stories that write an expectation of their own for one of these
    # libraries (the library stories, and the comparison's stories that
    # expect an incident), each told to the libraries it names.
    named = []  # (story file, [library names])
    for folder in (STORIES, "scenarios"):
        for file in sorted(os.listdir(os.path.join(project, folder))):
            if not file.endswith(".json") or file == "schema.json":
                continue
            story = json.load(open(os.path.join(project, folder, file)))
            mine = [name for name, expected in story.get("libraries", {}).items()
                    if name in libraries and (folder == STORIES or expected.get("incidents"))]
            if mine:
                named.append((os.path.join(folder, file), mine))
    runs = [(CONTROLS, libraries)] + [([file], names) for file, names in named]
    out = tempfile.mkdtemp(prefix="locklab-libraries-")
    KEPT.append(out)
    try:
        def suite(index):
            files, names = runs[index]
            command = [locklab, "suite", *files, "--libraries", libraries_file,
                       "--out", os.path.join(out, str(index)), "--jobs", "3"]
            for name in names:
                command += ["-a", name]
            return subprocess.run(command, cwd=project, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=840)
        # Two suites at a time: each waits on its stories' timers.
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            finished = list(pool.map(suite, range(len(runs))))
        problems = [line for run in finished if run.returncode != 0
                    for line in run.stdout.splitlines() if "NOT" in line or "error" in line]
        if any(run.returncode != 0 for run in finished):
            fail("a suite exited non-zero:\n" + "\n".join(problems))
        documents = [json.load(open(os.path.join(out, str(i), "results.json")))
                     for i in range(len(runs))]
        renewals = {}  # (story, library) -> [(process, type)] of its renewed events
        for i, (files, names) in enumerate(runs):
            for story, library in RENEWALS:
                path = os.path.join(out, str(i), story, library, "history.jsonl")
                if library in names and os.path.exists(path):
                    events = [json.loads(line) for line in open(path)]
                    renewals[(story, library)] = [(e["process"], e["type"]) for e in events
                                                  if e.get("f") == "renewed"]
    except (Exception, KeyboardInterrupt):
        # No run to read (fail() exits with the runs kept).
        shutil.rmtree(out, ignore_errors=True)
        KEPT.clear()
        raise
    results = documents[0]

    columns = {lock["name"]: lock for lock in results["locks"]}
    for name in libraries:
        if name not in columns:
            fail(f"{name} is not a column of the comparison")
        if not columns[name].get("version"):
            fail(f"{name}'s column has no version")

    cells = {(c["scenario"], c["algorithm"]): c for d in documents for c in d["cells"]}
    # A pause past the lease breaks every lease lock, unless the story says
    # why a library's design does otherwise (then its own expectation holds).
    pause = json.load(open(os.path.join(project, "scenarios/pause-longer-than-lease.json")))
    for name in libraries:
        if cells[("no-faults", name)]["verdicts"] != ["safe"]:
            fail(f"no-faults × {name}: {cells[('no-faults', name)]['verdicts']}, expected safe")
        cell = cells[("pause-longer-than-lease", name)]
        if name in pause.get("libraries", {}):
            if cell["outcome"] != "met":
                fail(f"pause-longer-than-lease × {name}: {cell['outcome']}, expected met")
        elif cell["verdicts"] != ["violated"]:
            fail(f"pause-longer-than-lease × {name}: expected violated")
        # c1 is paused past its lease, and every other client is granted the
        # lock only once that lease has run out: each overlap is an overrun,
        # and the adapter reports enough (the winning try's attempt_ns, every
        # background renewal) for the history to show it.
        # A library that keeps part of that to itself says why in
        # libraries.json (unclassified_overlaps); none of its overlaps may
        # then be of the wrong class either.
        overlaps = cell["harm"]["overlaps"]
        undated = columns[name].get("unclassified_overlaps")
        if overlaps["broken-lease"] or (overlaps["unclassified"] and not undated):
            fail(f"pause-longer-than-lease × {name}: overlaps {overlaps}, expected every one "
                 "an overrun (does the adapter report its winning try's attempt_ns and "
                 "every renewal?)")

    # Every expectation a library story writes for a library is what was
    # measured (met, not merely safer than a built-in), and so is every
    # incident a story expects a library to leave behind.
    stories = 0
    for file, names in named:
        story = json.load(open(os.path.join(project, file)))
        for name in names:
            expected = story["libraries"][name]
            cell = cells[(story["name"], name)]
            if "not_applicable" in expected:
                want = "not-applicable"
            else:
                want = "met"
                stories += 1
                if expected.get("verdict") == "violated":
                    missing = [k for k in expected.get("kinds", []) if k not in cell["kinds"]]
                    if missing:
                        fail(f"{story['name']} × {name}: kinds {missing} not found")
                for kind in expected.get("incidents", []):
                    left = cell.get("incidents", {}).get("kinds", {}).get(kind, 0)
                    if left != cell["runs"]:
                        fail(f"{story['name']} × {name}: {kind} left in {left} of "
                             f"{cell['runs']} runs, expected in every run")
            if cell["outcome"] != want:
                fail(f"{story['name']} × {name}: {cell['outcome']}, expected {want}")
    # A renewal is recorded as what it did: an overdue one refused by every
    # master is refused, not unknown (an unknown renewal may have carried the
    # lease past a later grant, and the overlaps it could have covered would
    # lose their class).
    for (story, library), (process, want) in RENEWALS.items():
        if library not in libraries:
            continue
        seen = renewals.get((story, library))
        if seen is None:
            fail(f"{story} × {library}: no history to read its renewals from")
        if (process, want) not in seen:
            fail(f"{story} × {library}: {process}'s renewals were {seen}, expected one {want}")
    if stories == 0 and runtime in (None, "node"):
        fail("no library story names a library")
    shutil.rmtree(out, ignore_errors=True)
    print(f"check_libraries: {len(libraries)} libraries, {len(cells)} cells, "
          f"{stories} library expectations met")


if __name__ == "__main__":
    main()
