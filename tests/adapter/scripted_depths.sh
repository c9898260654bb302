#!/bin/sh
# A scripted re-entrant adapter: every acquire reports depth 2, the first
# release depth 1 left, every later release a negative depth (a protocol error).
releases=0
while read -r line; do
  id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  case "$line" in
    *'"hello"'*) echo "{\"id\":$id,\"ok\":true,\"name\":\"scripted-depths\",\"reentrant\":true}" ;;
    *'"acquire"'*) echo "{\"id\":$id,\"ok\":true,\"owner\":\"o\",\"reentry\":2}" ;;
    *'"release"'*)
      releases=$((releases + 1))
      if [ "$releases" = 1 ]; then left=1; else left=-1; fi
      echo "{\"id\":$id,\"ok\":true,\"remaining\":$left}" ;;
  esac
done
