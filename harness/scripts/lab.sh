#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   lab.sh suite [ARGS…]   set up, build locklab, run the comparison (every story, every
#                          built-in lock and the pinned libraries), then their safety
#                          envelopes, write the report and COMPARISON.md; exits with the
#                          worse status of the two; ARGS go to `locklab suite`, except
#                          --no-envelope (the stories alone); --reuse DIR re-measures only
#                          the cells and envelope searches that changed since DIR's run
#                          (DIR may be results itself)
#   lab.sh test            set up, build, run every test
#   lab.sh setup           install what is missing and build (idempotent)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="$here/build"

# One list for this script and docker/Dockerfile.
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$here/harness/scripts/packages.txt")

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  echo "lab.sh: installing ${missing[*]}" >&2
  local run=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
      run=(sudo)
    else
      echo "lab.sh: error: missing packages (${missing[*]}) and no root or passwordless sudo to install them;" \
           "install them with: apt-get install ${missing[*]}" >&2
      exit 2
    fi
  fi
  "${run[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${run[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The lock libraries (lock_impls/libraries): Node.js and npm from Debian when
# the machine has none, then the packages pinned in package-lock.json (npm ci,
# again only when the lock file changed). Nothing is fetched at run time.
install_libraries() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    packages=(nodejs npm)
    install_missing
  fi
  local dir="$here/lock_impls/libraries" stamp
  stamp=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [[ "$(cat "$dir/node_modules/.locklab-installed" 2>/dev/null)" != "$stamp" ]]; then
    echo "lab.sh: installing the pinned lock libraries (npm ci)" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    echo "$stamp" >"$dir/node_modules/.locklab-installed"
  fi
  # The libraries of other languages: each folder's setup.sh builds its
  # adapters from its pinned lock file (pom.xml, go.sum, requirements.txt with
  # hashes, Cargo.lock), once; it says in one line what is missing when the
  # machine lacks a toolchain. Go and Rust are not Debian 12's (too old there):
  # their usual install places are looked in too.
  local extra
  for extra in /usr/local/go/bin "$HOME/.cargo/bin"; do
    [[ -d $extra && :$PATH: != *:$extra:* ]] && PATH="$PATH:$extra"
  done
  export PATH
  local setup
  for setup in "$dir"/*/setup.sh; do
    if [[ -f $setup ]]; then bash "$setup"; fi
  done
}

# build [TARGET…]: every target, or only those named (the comparison needs
# locklab alone, not the tests: half the build).
build() {
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O2 >/dev/null
  fi
  local targets=()
  [[ $# -gt 0 ]] && targets=(--target "$@")
  cmake --build "$build" -j "$(nproc)" "${targets[@]}"
}

# Everything a run needs: the Debian packages first, then the libraries'
# setups beside the lab's build. On a fresh clone Cargo and Maven take a
# minute; side by side, each fills the moments the other waits (a cache read,
# a link, the last file or crate compiled alone). Fails when either does,
# after both ended; an interrupt ends both.
setup_and_build() {
  install_missing
  set -m  # the setups in a process group of their own, which the trap ends whole
  install_libraries &
  setups=$!
  set +m
  trap 'kill -TERM -- "-$setups" 2>/dev/null || true' EXIT
  trap 'exit 130' INT TERM
  local status=0
  build "$@" || status=$?
  wait "$setups" || status=$?
  trap - EXIT INT TERM
  return "$status"
}

command=${1:-}
[[ $# -gt 0 ]] && shift
case "$command" in
  setup)
    setup_and_build
    ;;
  suite)
    setup_and_build locklab
    cd "$here"
    # How many cells at a time is locklab suite's default (eight, those on
    # virtual time one per core) unless --jobs is given.
    envelope=1
    args=()
    reuse=()
    previous=""
    for arg in "$@"; do
      if [[ $previous == --reuse ]]; then reuse=(--reuse "$arg/envelope"); fi
      [[ $arg == --reuse=* ]] && reuse=(--reuse "${arg#--reuse=}/envelope")
      if [[ $arg == --no-envelope ]]; then envelope=0; else args+=("$arg"); fi
      previous=$arg
    done
    status=0
    # Nothing of an earlier run may end up in this run's report, except what
    # --reuse carries over (and marks as carried).
    [[ ${#reuse[@]} -eq 0 ]] && rm -rf results/envelope
    "$build/locklab" suite scenarios scenarios/libraries --libraries lock_impls/libraries/libraries.json \
      --out results --junit results/junit.xml "${args[@]}" || status=$?
    # Interrupted (locklab ends its work and exits 128 + the signal): no more.
    [[ $status -ge 128 ]] && exit "$status"
    # Then the safety envelopes of the same locks, alone on the machine, as
    # many searches at a time as locklab envelope's default: the bounds are
    # timings, which load moves. Side by side with the stories the whole job
    # took 22-25 minutes, but a Java RedLock's acquire then took most of the
    # envelope story's lease, and that search's story went untold in two
    # runs of three (docs/PERFORMANCE.md, section 5).
    if [[ $status -ne 2 && $envelope -eq 1 ]]; then
      "$build/locklab" envelope --libraries lock_impls/libraries/libraries.json \
        --out results/envelope "${reuse[@]}" || { s=$?; [[ $s -gt $status ]] && status=$s; }
      [[ $status -ge 128 ]] && exit "$status"
    fi
    # The report and the table, from this run's stories and envelopes (status
    # 2: the suite may not have written them).
    if [[ $status -ne 2 && -f results/results.json ]]; then
      if ! report=$("$build/locklab" report results --comparison results/COMPARISON.md 2>&1); then
        echo "$report" >&2
        status=2
      else
        echo "comparison: results/COMPARISON.md" >&2
      fi
    fi
    exit "$status"
    ;;
  test)
    setup_and_build
    cd "$build"
    # One test more than there are cores: the tests wait on their stories'
    # timers for much of their time (docs/PERFORMANCE.md, "The tests").
    exec ctest --output-on-failure -j "$(($(nproc) + 1))" "$@"
    ;;
  *)
    echo "usage: lab.sh suite|test|setup [ARGS…]" >&2
    exit 2
    ;;
esac
