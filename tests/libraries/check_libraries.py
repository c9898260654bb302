#!/usr/bin/env python3
"""Runs every library of lock_impls/libraries/libraries.json through two
controls, and every story that writes its own expectation for a library
through that library, with real redis-server processes, and checks what the
comparison relies on:

- every cell met its expectation (or was safer than the built-in it stands
  in for, or not applicable with its reason);
- each library is a column with the version its adapter announced;
- every library holds with no faults and breaks when paused past its lease,
  no overlap a broken lease, and the adapter reports what the history needs
  to tell the overrun (its winning try, its renewals), so that an overlap
  left unclassified is so only by timing;
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
# Suites at a time, and cells at a time in each: nine cells at once, most of
# them waiting on their stories' timers.
SUITES = 3
JOBS = 3
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


def runs_of(directory, cell, name):
    """Each run of library `name` in `cell` (its suite's output in
    `directory`), with the events of its history in order."""
    results = os.path.join(directory, cell["results"])
    for run in json.load(open(results))["runs"]:
        if run["algorithm"] != name:
            continue
        history = os.path.join(os.path.dirname(results), run["history"])
        yield run, [json.loads(line) for line in open(history)]


def check_no_broken_lease(directory, cell, name, unlock_deletes_any_holder):
    """No overlap of `cell` (a pause-longer-than-lease cell of library
    `name`) is a broken lease: c1 is paused past its lease, and c2 and c3
    are granted the lock only once it has run out. A library whose unlock
    deletes the key whoever holds it (libraries.json
    unlock_deletes_any_holder) frees the key of whichever of c2 and c3 holds
    it when c1's late release lands, and the other may take the lock inside
    that lease: a broken lease of the library's own, there or not by where
    the release lands among their holds of a few milliseconds. It is
    accepted when a release of c1 came between the overlap's two grants and
    c1 is neither holder; any other broken lease fails."""
    for run, events in runs_of(directory, cell, name):
        c1_releases = [e["index"] for e in events
                       if e["process"] == "c1" and e.get("f") == "release"]
        for violation in run.get("check", {}).get("violations", []):
            if violation.get("class") != "broken-lease":
                continue
            earlier, later = violation["events"][0], violation["events"][1]
            if (unlock_deletes_any_holder and "c1" not in violation["processes"]
                    and any(earlier < i < later for i in c1_releases)):
                continue
            fail(f"pause-longer-than-lease × {name}: a broken lease at events "
                 f"{violation['events']}, expected none: {violation.get('explanation')}")


def check_dated(directory, cell, name):
    """Every run of `cell` (a pause-longer-than-lease cell of library `name`,
    its suite's output in `directory`) recorded what classes its overlaps:
    each acquire ok carries the winning try's attempt_ns, a lock that renews
    in the background records its renewals, and an overlap left
    unclassified is so only by timing (results.json, overlap.timing_only)."""
    for run, events in runs_of(directory, cell, name):
        for event in events:
            if event.get("f") != "acquire" or event["type"] != "ok":
                continue
            value = event.get("value") or {}
            if "attempt_ns" not in value:
                fail(f"pause-longer-than-lease × {name}: acquire ok (event {event['index']}) "
                     "without attempt_ns: the adapter does not date its winning try")
            if value.get("renews") and not value.get("renewals_recorded"):
                fail(f"pause-longer-than-lease × {name}: the lock renews in the background "
                     f"(event {event['index']}) and the adapter does not record its renewals")
        for violation in run.get("check", {}).get("violations", []):
            overlap = violation.get("overlap", {})
            if violation.get("class") == "unclassified" and not overlap.get("timing_only"):
                fail(f"pause-longer-than-lease × {name}: overlap at events "
                     f"{violation['events']} unclassified because "
                     f"{overlap.get('unclassified_because')}: {overlap.get('explanation')}")


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
    # expect an incident or nest, which the controls do not), each told to
    # the libraries it names.
    named = []  # (story file, [library names])
    for folder in (STORIES, "scenarios"):
        for file in sorted(os.listdir(os.path.join(project, folder))):
            if not file.endswith(".json") or file == "schema.json":
                continue
            story = json.load(open(os.path.join(project, folder, file)))
            nests = story["workload"].get("reentry", 1) > 1
            mine = [name for name, expected in story.get("libraries", {}).items()
                    if name in libraries
                    and (folder == STORIES or expected.get("incidents") or nests)]
            if mine:
                named.append((os.path.join(folder, file), mine))
    runs = [(CONTROLS, libraries)] + [([file], names) for file, names in named]
    # The longest first (a story's length times its rounds of cells), so
    # that no long story starts last and runs alone.
    def length(files, names):
        story_ms = sum(json.load(open(os.path.join(project, f)))["duration_ms"] for f in files)
        return story_ms * -(-len(names) // JOBS)
    runs.sort(key=lambda run: -length(*run))
    controls = runs.index((CONTROLS, libraries))  # its output: out/<controls>
    out = tempfile.mkdtemp(prefix="locklab-libraries-")
    KEPT.append(out)
    try:
        def suite(index):
            files, names = runs[index]
            command = [locklab, "suite", *files, "--libraries", libraries_file,
                       "--out", os.path.join(out, str(index)), "--jobs", str(JOBS)]
            for name in names:
                command += ["-a", name]
            return subprocess.run(command, cwd=project, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=840)
        # Several suites at a time: each waits on its stories' timers.
        with concurrent.futures.ThreadPoolExecutor(max_workers=SUITES) as pool:
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
    results = documents[controls]

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
        # lock only once that lease has run out: no overlap is a broken
        # lease, and the adapter reports what the history needs to show the
        # overrun (the winning try's attempt_ns, every background renewal).
        # Given that, an overlap stays unclassified only by where a request's
        # transit happened to fall (a retry in flight as the lease ended:
        # `timing_only`), which no test may count on either way.
        # A library that keeps part of that to itself says why in
        # libraries.json (unclassified_overlaps).
        check_no_broken_lease(os.path.join(out, str(controls)), cell, name,
                              columns[name].get("unlock_deletes_any_holder"))
        if not columns[name].get("unclassified_overlaps"):
            check_dated(os.path.join(out, str(controls)), cell, name)

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
