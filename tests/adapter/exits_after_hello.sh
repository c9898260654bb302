#!/bin/sh
# A broken adapter: answers hello, then dies at the next request.
read -r line
id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
echo "{\"id\":$id,\"ok\":true,\"name\":\"exits-after-hello\"}"
read -r line
echo "giving up: this adapter exits after hello" >&2
exit 3
