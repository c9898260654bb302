#!/bin/bash
# Builds the Java adapters (pom.xml: every library and plugin at an exact
# version) into target/: the adapters' jar, the libraries' jars in
# target/lib and a class archive, so that nothing is fetched when an adapter
# runs (java/run) and it starts fast.
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
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && [ -d target/lib ] && [ -f target/classpath ]; then
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
# The classpath `run` starts every adapter with, in a fixed order (the class
# archive below holds only for the classpath it was made with).
{ echo locklab-java-adapters-1.jar; (cd target && LC_ALL=C ls lib/*.jar); } > target/classpath
# A class-data archive (AppCDS) of the classes an adapter loads on its way to
# its first release: a JVM that maps them instead of parsing them starts with
# about half the CPU (a Redisson adapter 0.55 s instead of 0.93 s, ShedLock's
# and Spring's 0.5 s instead of 0.9 s), which is most of what a Java cell
# costs beyond its story. The classes are listed by running every adapter
# class once against a redis-server of its own on loopback (stopped by pid
# when this script ends), or, without redis-server, against a port where
# nothing listens, which lists fewer. Without the archive `run` works as
# before, only slower.
redis=127.0.0.1:1
if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo 0)
  if [ "$port" -gt 0 ]; then
    redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no >/dev/null 2>&1 &
    redis_pid=$!
    trap 'kill "$redis_pid" 2>/dev/null; rm -f "$log"' EXIT
    for _ in $(seq 50); do
      if redis-cli -p "$port" ping >/dev/null 2>&1; then redis=127.0.0.1:$port; break; fi
      sleep 0.1
    done
  fi
fi
rm -f target/classes.lst
for adapter in RedissonLeaseLock RedissonWatchdogLock RedissonFencedLockAdapter \
  "RedissonMultiNodeLock --redlock" ShedLockRedis SpringLockRegistry; do
  # shellcheck disable=SC2086 # the adapter's class and its flags, as words
  printf '%s\n' '{"id":1,"op":"hello"}' '{"id":2,"op":"connect","ttl_ms":1000}' \
    '{"id":3,"op":"acquire","lock":"setup","ttl_ms":1000,"wait_ms":0}' \
    '{"id":4,"op":"release","lock":"setup","owner":"setup"}' '{"id":5,"op":"reset"}' |
    LOCKLAB_JAVA_CLASS_LIST=target/classes.part timeout 60 ./run $adapter \
      --redis "$redis,$redis,$redis" >/dev/null 2>&1 || true
  cat target/classes.part >> target/classes.lst 2>/dev/null || true
  rm -f target/classes.part
done
if [ -s target/classes.lst ]; then
  sort -u target/classes.lst -o target/classes.lst
  java -Xshare:dump -XX:SharedClassListFile=target/classes.lst -XX:SharedArchiveFile=target/adapters.jsa \
    -Xlog:disable -cp "$(sed "s|^|$(pwd -P)/target/|" target/classpath | paste -sd: -)" >"$log" 2>&1 ||
    { rm -f target/adapters.jsa; echo "lab.sh: warning: no class archive for the Java adapters (they start slower): $(tail -1 "$log")" >&2; }
fi
echo "$hash" > "$stamp"
