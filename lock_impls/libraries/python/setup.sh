#!/bin/bash
# Builds lock_impls/libraries/python/.venv from Debian's /usr/bin/python3
# and installs requirements.txt into it (every package pinned with its hash,
# no dependency resolution). Idempotent: .venv/.stamp holds the hash of
# requirements.txt it was built from, and a second run with the same file
# does nothing.
set -euo pipefail
cd "$(dirname "$0")"
python=/usr/bin/python3
venv=.venv
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ -f "$venv/.stamp" ] && [ "$(cat "$venv/.stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
    exit 0
fi
if [ ! -x "$python" ]; then
    echo "lab.sh: error: $python not found (Debian 12: apt-get install python3 python3-venv)" >&2
    exit 1
fi
if ! "$python" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
    echo "lab.sh: error: $python -m venv is unavailable or Python is older than 3.9 (Debian 12: apt-get install python3-venv)" >&2
    exit 1
fi
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --require-hashes --no-deps --only-binary :all: -r requirements.txt
# Every pinned requirement is met by the others (--no-deps installs exactly the
# list): quiet when it is, pip's own words when not.
if ! check=$("$venv/bin/python" -m pip check --disable-pip-version-check 2>&1); then
    echo "$check" >&2
    echo "lab.sh: error: the pinned Python libraries do not fit together (pip check, above)" >&2
    exit 1
fi
echo "$want" > "$venv/.stamp"
