#!/bin/sh
# Fuzzes the history reader and the checkers with libFuzzer.
#
#   run_fuzz.sh SECONDS [BUILD_DIR] [WORK_DIR]
#
# Builds the target with clang++ into BUILD_DIR (default: a directory under
# $TMPDIR) unless it is already there, then runs it for SECONDS on the seed
# corpus beside this script. WORK_DIR keeps the corpus it grows and, on a
# finding, the input that caused it (crash-*). Exit status 0 = no finding.
set -eu
seconds=${1:?usage: run_fuzz.sh SECONDS [BUILD_DIR] [WORK_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
build=${2:-${TMPDIR:-/tmp}/locklab-fuzz-build}
work=${3:-$build/work}
fuzzer=$build/history_reader_fuzz

if [ ! -x "$fuzzer" ]; then
  cmake -S "$here/standalone" -B "$build" -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build"
fi
mkdir -p "$work/corpus"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$here/corpus"
