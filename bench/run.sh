#!/usr/bin/env bash
# Runs every benchmark and writes their figures to bench/results/latest.json
# (docs/PERFORMANCE.md says what each one means). About 12 minutes on a
# 2-core machine; every server it needs is started and stopped by the
# benchmarks themselves, on loopback.
#
#   bash bench/run.sh [--suite-results DIR] [--envelope-results DIR] [--quick]
#
# --suite-results DIR  also report a suite run's wall time, total and per
#                      scenario, and where its cells' time went (servers,
#                      clients, story, check, teardown; in all and per lock),
#                      from DIR/results.json (a run that already
#                      happened: `locklab suite scenarios --jobs 2 --out DIR`)
# --envelope-results DIR  also report a safety envelope's wall time, total,
#                      per lock and per phase of its runs, from DIR/envelope.json (`locklab
#                      envelope --out DIR`; lab.sh suite writes results/envelope)
# --quick              shorter runs, fewer client counts (a smoke run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$here/build"
out_dir="$here/bench/results"
suite_results=""
envelope_results=""
quick=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --suite-results) suite_results=${2:?--suite-results needs a directory}; shift 2 ;;
    --envelope-results) envelope_results=${2:?--envelope-results needs a directory}; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "usage: bench/run.sh [--suite-results DIR] [--envelope-results DIR] [--quick]" >&2; exit 2 ;;
  esac
done
if [[ -n "$envelope_results" && ! -f "$envelope_results/envelope.json" ]]; then
  echo "bench/run.sh: $envelope_results/envelope.json does not exist" >&2
  exit 2
fi
if [[ -n "$suite_results" && ! -f "$suite_results/results.json" ]]; then
  echo "bench/run.sh: $suite_results/results.json does not exist" >&2
  exit 2
fi
for tool in redis-server redis-benchmark python3; do
  command -v "$tool" >/dev/null || {
    echo "bench/run.sh: $tool is missing (bash harness/scripts/lab.sh setup installs it)" >&2
    exit 2
  }
done

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O2 >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target lock_bench checkers_bench recorder_bench locklab

work=$(mktemp -d "${TMPDIR:-/tmp}/locklab-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out_dir"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
seconds=3 clients=1,8,32,64 other_clients=1,32 pairs=5 rounds=21 long=30 events=10000000 explore=(--minutes 2)
if [[ $quick -eq 1 ]]; then
  seconds=1 clients=1,32 other_clients=32 pairs=2 rounds=3 long=6 events=1000000 explore=(--runs 6)
fi
# The lab (and redis-benchmark, which it starts) on one CPU, the server on
# another: left to the scheduler, a client and the server it wakes often
# share a CPU while the other idles, which moves a rate by a third.
pin=(--pin on)
[[ $(nproc) -lt 2 ]] && pin=(--pin off)

echo "== set-nx-px throughput against redis-benchmark (clients $clients, $pairs pairs each)"
"$build/bench/lock_bench" throughput --algorithms set-nx-px --clients "$clients" \
  --seconds "$seconds" --pairs "$pairs" "${pin[@]}" --json "$work/throughput.json"
echo "== every algorithm's throughput (clients $other_clients, one pair each)"
"$build/bench/lock_bench" throughput --clients "$other_clients" --seconds "$seconds" --pairs 1 \
  "${pin[@]}" --json "$work/throughput-all.json"
echo "== recording overhead ($rounds rounds)"
"$build/bench/lock_bench" recording --clients 32 --seconds 2 --rounds "$rounds" "${pin[@]}" \
  --json "$work/recording.json"
if command -v valgrind >/dev/null; then
  # Instructions, not seconds: the same count whatever the host does, where
  # the rounds above move by tens of per cent (docs/PERFORMANCE.md, section 2).
  echo "== recording's instructions per acquisition (callgrind, the same loop, one round)"
  mkdir -p "$work/callgrind"
  valgrind --tool=callgrind --callgrind-out-file="$work/callgrind/out.%p" \
    "$build/bench/lock_bench" recording --clients 32 --seconds 6 --rounds 1 --pin off \
    >"$work/callgrind/round.txt" 2>"$work/callgrind/valgrind.log"
fi
echo "== the recorder alone: an acquisition's events, recorded and not"
"$build/bench/recorder_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$work/recorder.json" --benchmark_out_format=json
echo "== memory of a run, short and long (a fresh process each)"
"$build/bench/lock_bench" memory --clients 8 --seconds 5 --json "$work/memory-short.json"
"$build/bench/lock_bench" memory --clients 8 --seconds "$long" --json "$work/memory-long.json"
echo "== checkers"
"$build/bench/checkers_bench" --events="$events" --benchmark_out="$work/checkers.json" \
  --benchmark_out_format=json

echo "== explore: generated runs per minute (set-nx-px, every fault kind, 2 at a time)"
# Exit 1 only says it found violations; 2 is a failure.
status=0
"$build/locklab" explore set-nx-px "${explore[@]}" --jobs 2 --seed 1 --shrink-candidates 0 \
  --confirm-runs 1 --out "$work/explore" 2>"$work/explore.log" || status=$?
if [[ $status -gt 1 ]]; then
  cat "$work/explore.log" >&2
  exit "$status"
fi

echo "== virtual time: the canonical suite's cells virtual and real, explore, the envelopes"
# The same cells on both clocks in one run: the ratio is the real cells'
# seconds over the virtual cells' seconds, for the cells that kept virtual time.
for clock in virtual real; do
  status=0
  "$build/locklab" suite "$here/scenarios" --time "$clock" --jobs 2 \
    --out "$work/suite-$clock" >"$work/suite-$clock.log" 2>&1 || status=$?
  if [[ $status -gt 1 ]]; then cat "$work/suite-$clock.log" >&2; exit "$status"; fi
done
status=0
"$build/locklab" explore set-nx-px "${explore[@]}" --time virtual --jobs 2 --seed 1 \
  --shrink-candidates 0 --confirm-runs 1 --out "$work/explore-virtual" \
  2>"$work/explore-virtual.log" || status=$?
if [[ $status -gt 1 ]]; then cat "$work/explore-virtual.log" >&2; exit "$status"; fi
status=0
"$build/locklab" envelope --time virtual --out "$work/envelope-virtual" \
  >"$work/envelope-virtual.log" 2>&1 || status=$?
if [[ $status -gt 1 ]]; then cat "$work/envelope-virtual.log" >&2; exit "$status"; fi

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
redis_version=$(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')
python3 - "$work" "$out_dir/latest.json" "$suite_results" "$started" "$(nproc)" \
  "$redis_version" "$load_before" "$load_after" "$envelope_results" <<'PY'
import json, os, sys
work, out, suite_dir, started, cores, redis, load_before, load_after, envelope_dir = sys.argv[1:]
read = lambda name: json.load(open(os.path.join(work, name)))
doc = {"date": started, "cores": int(cores), "redis_version": redis,
       "load_average_before": load_before, "load_average_after": load_after}
doc.update(read("throughput.json"))
# set-nx-px from its pairs; the other algorithms from their single pair.
doc["lock_throughput"] += [row for row in read("throughput-all.json")["lock_throughput"]
                           if row["algorithm"] != "set-nx-px"]
doc.update(read("recording.json"))
# One profile per loop, labelled by lock_bench; its acquisitions from the round's line.
callgrind = os.path.join(work, "callgrind")
if os.path.isdir(callgrind):
    import re
    counts = re.search(r"(\d+) vs (\d+) acquisitions", open(os.path.join(callgrind, "round.txt")).read())
    per_acquisition = {}
    for name in os.listdir(callgrind):
        text = open(os.path.join(callgrind, name), errors="replace").read() if name.startswith("out.") else ""
        label = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
        total = re.search(r"^summary: (\d+)", text, re.M)
        if counts and label and total:
            arm = label.group(1)
            acquisitions = int(counts.group(1 if arm == "recorded" else 2))
            per_acquisition[arm] = round(int(total.group(1)) / max(acquisitions, 1))
    if len(per_acquisition) == 2:
        doc["recording"]["instructions_per_acquisition"] = per_acquisition
        doc["recording"]["instructions_overhead"] = round(
            per_acquisition["recorded"] / per_acquisition["not recorded"] - 1, 4)
        print(f"recording: {per_acquisition['recorded']} against {per_acquisition['not recorded']} "
              f"instructions per acquisition "
              f"({doc['recording']['instructions_overhead'] * 100:+.1f} %)")
# The medians of recorder_bench's repetitions, ns of CPU per acquisition.
doc["recorder_bench_cpu_ns_per_acquisition"] = {
    b["label"]: round(b["cpu_time"]) for b in read("recorder.json")["benchmarks"]
    if b.get("aggregate_name") == "median"}
memory = [read("memory-short.json"), read("memory-long.json")]
doc["memory_runs"] = memory
doc["run_peak_rss_mb_per_million_events"] = memory[-1]["peak_rss_mb_per_million_events"]
doc["run_peak_rss_mb"] = max(m["peak_rss_mb"] for m in memory)
for b in read("checkers.json")["benchmarks"]:
    if b["name"].startswith("check_file"):
        doc["checker_events_per_s"] = round(b["per_s_wall"])
        doc["checker_peak_rss_mb"] = b.get("peak_rss_MB")
doc["checkers_bench"] = {b["name"]: {k: v for k, v in b.items()
                                     if k in ("per_s_wall", "per_s_cpu", "items", "peak_rss_MB")}
                         for b in read("checkers.json")["benchmarks"]}
explore = read("explore/explore.json")
doc["explore_runs_per_minute"] = explore["runs_per_minute"]
doc["explore"] = {k: explore[k] for k in ("runs_total", "explore_seconds", "runs_per_minute")}
doc["explore"]["jobs"] = explore["options"]["jobs"]
# Virtual time against real time, measured in this run (docs/PERFORMANCE.md).
real_cells = {(c["scenario"], c["algorithm"]): c for c in read("suite-real/results.json")["cells"]}
virtual_suite = read("suite-virtual/results.json")
pairs = [(c, real_cells[(c["scenario"], c["algorithm"])]) for c in virtual_suite["cells"]
         if c.get("outcome") != "not-applicable" and (c["scenario"], c["algorithm"]) in real_cells]
virtual_s = sum(v.get("seconds", 0) for v, _ in pairs)
real_s = sum(r.get("seconds", 0) for _, r in pairs)
explore_virtual = read("explore-virtual/explore.json")
envelope_virtual = read("envelope-virtual/envelope.json")
doc["virtual_time"] = {
    "cells": len(pairs),
    "cell_seconds_virtual": round(virtual_s, 2),
    "cell_seconds_real": round(real_s, 2),
    "speedup": round(real_s / virtual_s, 1) if virtual_s else None,
    "suite_wall_seconds_virtual": virtual_suite.get("seconds"),
    "suite_wall_seconds_real": read("suite-real/results.json").get("seconds"),
    "verdicts_differ": [f"{v['scenario']} × {v['algorithm']}" for v, r in pairs
                        if sorted(set(v.get("verdicts", []))) != sorted(set(r.get("verdicts", [])))],
    "explore_runs_per_minute": explore_virtual["runs_per_minute"],
    "envelope_seconds": envelope_virtual.get("seconds"),
}
doc["suite_seconds"] = None
phases = ("servers", "clients", "story", "check", "teardown")
if suite_dir:
    suite = json.load(open(os.path.join(suite_dir, "results.json")))
    per = {}
    for cell in suite.get("cells", []):
        per[cell["scenario"]] = round(per.get(cell["scenario"], 0) + cell.get("seconds", 0), 2)
    doc["suite_seconds"] = suite.get("seconds")
    doc["suite_jobs"] = suite.get("options", {}).get("jobs")
    doc["suite_started_at"] = suite.get("started_at")
    doc["suite_scenario_seconds"] = per
    # Where the cells' time went (each run's timing, summed; suites from
    # before it have none), and per lock, so that a slow column shows.
    total = {p: 0.0 for p in phases}
    per_lock = {}
    for cell in suite.get("cells", []):
        timing = cell.get("timing") or {}
        lock = per_lock.setdefault(cell["algorithm"], {p: 0.0 for p in phases})
        for p in phases:
            total[p] += timing.get(p, 0)
            lock[p] += timing.get(p, 0)
    summed = sum(total.values())
    if summed > 0:
        doc["suite_time_breakdown"] = {
            p: {"seconds": round(total[p], 1), "share": round(total[p] / summed, 3)} for p in phases}
        doc["suite_time_per_lock"] = {
            name: {p: round(v, 1) for p, v in phases_of.items()} for name, phases_of in per_lock.items()}
doc["envelope_seconds"] = None
if envelope_dir:
    envelope = json.load(open(os.path.join(envelope_dir, "envelope.json")))
    per_lock = {}
    # Where the searches' time went, as for the suite's cells (each run's
    # timing, summed; envelopes from before it have none).
    total = {p: 0.0 for p in phases}
    for cell in envelope.get("cells", []):
        entry = per_lock.setdefault(cell["lock"], {"seconds": 0, "runs": 0})
        entry["seconds"] = round(entry["seconds"] + cell.get("seconds", 0), 1)
        entry["runs"] += cell.get("runs", 0)
        for p in phases:
            total[p] += (cell.get("timing") or {}).get(p, 0)
    searched = sum(cell.get("seconds", 0) for cell in envelope.get("cells", []))
    if sum(total.values()) > 0:
        # "between runs": the searches' time outside their runs' phases.
        doc["envelope_time_breakdown"] = {
            p: {"seconds": round(v, 1), "share": round(v / searched, 3)}
            for p, v in [*total.items(), ("between runs", searched - sum(total.values()))]}
    doc["envelope_seconds"] = envelope.get("seconds")
    doc["envelope_started_at"] = envelope.get("started_at")
    doc["envelope_searches"] = len(envelope.get("cells", []))
    doc["envelope_runs"] = sum(e["runs"] for e in per_lock.values())
    doc["envelope_lock_seconds"] = per_lock
with open(out + ".partial", "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
os.replace(out + ".partial", out)
print(f"wrote {out}")
PY
