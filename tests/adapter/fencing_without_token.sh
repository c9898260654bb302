#!/bin/sh
# A broken adapter: promises fencing tokens in hello, then acquires without one.
while read -r line; do
  id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  if [ "$id" = 1 ]; then
    echo "{\"id\":$id,\"ok\":true,\"name\":\"fencing-without-token\",\"fencing\":true}"
  else
    echo "{\"id\":$id,\"ok\":true,\"owner\":\"o-$id\"}"
  fi
done
