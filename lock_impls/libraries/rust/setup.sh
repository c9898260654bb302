#!/usr/bin/env bash
# Builds the Rust adapters (rslock) into target/release: every crate pinned
# by Cargo.lock, fetched from crates.io once, nothing fetched at run time.
# Idempotent: a stamp of the hash of Cargo.lock, Cargo.toml, build.rs and
# src/ makes a second run instant while nothing changed.
set -euo pipefail
cd "$(dirname "$0")"

MSRV=1.88   # the newest rust-version among the crates of Cargo.lock (icu_* 2.4)

cargo=$(command -v cargo || true)
[ -z "$cargo" ] && [ -x "$HOME/.cargo/bin/cargo" ] && cargo="$HOME/.cargo/bin/cargo"
if [ -z "$cargo" ]; then
  echo "lab.sh: error: cargo not found; install Rust >= $MSRV with rustup (https://rustup.rs) or put cargo on PATH" >&2
  exit 1
fi
version=$("$cargo" --version 2>/dev/null | awk '{print $2}')
if [ "$(printf '%s\n%s\n' "$MSRV" "${version%%-*}" | sort -V | head -1)" != "$MSRV" ]; then
  echo "lab.sh: error: $cargo is cargo ${version:-?}; the Rust adapters need Rust >= $MSRV (rustup update, or put a newer cargo first on PATH)" >&2
  exit 1
fi

stamp=.setup-stamp
hash=$(cat Cargo.lock Cargo.toml build.rs $(find src -type f | sort) | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && [ -x target/release/rslock ]; then
  exit 0
fi
PATH="$(dirname "$cargo"):$PATH" "$cargo" build --release --locked --quiet
echo "$hash" > "$stamp"
