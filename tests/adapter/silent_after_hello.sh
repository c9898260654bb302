#!/bin/sh
# A broken adapter: answers hello, then reads requests and never answers.
read -r line
id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
echo "{\"id\":$id,\"ok\":true,\"name\":\"silent-after-hello\"}"
while read -r line; do :; done
