#!/bin/bash
# Builds the Java adapters (pom.xml: every library and plugin at an exact
# version) into target/: classes in target/classes, the libraries' jars in
# target/lib, so that nothing is fetched when an adapter runs (java/run).
# Idempotent: a stamp of pom.xml's and the sources' hash makes a second run
# instant. Needs Java 17+ and Maven (Debian: default-jdk-headless, maven).
set -euo pipefail
case $0 in */*) cd "${0%/*}" ;; esac

if ! command -v java >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
  echo "lab.sh: error: java/javac not found: the Java adapters need a JDK 17 or later (Debian: apt-get install default-jdk-headless)" >&2
  exit 1
fi
version=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
if [ "${version%%.*}" -lt 17 ] 2>/dev/null || [ -z "$version" ]; then
  echo "lab.sh: error: java $version is too old: the Java adapters need Java 17 or later (Debian: apt-get install default-jdk-headless)" >&2
  exit 1
fi
if ! command -v mvn >/dev/null 2>&1; then
  echo "lab.sh: error: mvn not found: the Java adapters are built with Maven (Debian: apt-get install maven)" >&2
  exit 1
fi

stamp=target/.setup-stamp
hash=$( (cat pom.xml run; find src -type f | sort | xargs cat) | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && [ -d target/lib ]; then
  exit 0
fi
rm -rf target
# Quiet unless it fails: then Maven's own words, on stderr.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! mvn -q -B -Dstyle.color=never package >"$log" 2>&1; then
  cat "$log" >&2
  echo "lab.sh: error: the Java adapters did not build (mvn package in lock_impls/libraries/java, above)" >&2
  exit 1
fi
echo "$hash" > "$stamp"
