#!/usr/bin/env bash
# Builds the Go adapters of this folder into bin/ (see README.md):
# go build -trimpath with the versions go.mod and go.sum pin
# (GOFLAGS=-mod=readonly: nothing is resolved anew; the module cache may
# download those exact versions once). Nothing is fetched at run time.
# Idempotent: a stamp of go.mod, go.sum and the sources skips a second build.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

# The Go toolchain: go.mod's "go" line is the oldest that builds it. Debian 12's
# golang (1.19) is too old; /usr/local/go (the official tarball) is looked at
# too. GOTOOLCHAIN=local: never download another toolchain behind our back.
need="$(sed -n 's/^go \([0-9][0-9.]*\)$/\1/p' go.mod)"
go_bin="$(command -v go || true)"
if [[ -z "$go_bin" && -x /usr/local/go/bin/go ]]; then go_bin=/usr/local/go/bin/go; fi
export GOTOOLCHAIN=local GOFLAGS=-mod=readonly
have=""
if [[ -n "$go_bin" ]]; then
    have="$("$go_bin" env GOVERSION 2>/dev/null | sed 's/^go//')" || have=""
fi
if [[ -z "$have" ]] || [[ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n1)" != "$need" ]]; then
    if [[ -n "$go_bin" && "$go_bin" != /usr/local/go/bin/go && -x /usr/local/go/bin/go ]]; then
        go_bin=/usr/local/go/bin/go
        have="$("$go_bin" env GOVERSION 2>/dev/null | sed 's/^go//')" || have=""
    fi
fi
if [[ -z "$have" ]] || [[ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n1)" != "$need" ]]; then
    echo "lab.sh: error: the Go adapters need Go ${need} or later (found: ${have:-no go on PATH or in /usr/local/go/bin}); install it from https://go.dev/dl/ into /usr/local/go" >&2
    exit 1
fi

stamp=.setup-stamp
sum="$( { echo "$have"; cat go.mod go.sum; find protocol cmd -name '*.go' -print0 | sort -z | xargs -0 cat; } | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$sum" && -x bin/redsync-adapter && -x bin/bsm-redislock-adapter ]]; then
    exit 0
fi
rm -f "$stamp"
mkdir -p bin
"$go_bin" build -trimpath -o bin/ ./cmd/redsync-adapter ./cmd/bsm-redislock-adapter
echo "$sum" > "$stamp"
