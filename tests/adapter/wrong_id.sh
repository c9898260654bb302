#!/bin/sh
# A broken adapter: answers every request with the id of another one.
while read -r line; do
  id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  echo "{\"id\":$((id + 1)),\"ok\":true,\"name\":\"wrong-id\"}"
done
