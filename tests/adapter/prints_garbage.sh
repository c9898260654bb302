#!/bin/sh
# A broken adapter: prints something that is not a response.
read -r line
echo "Traceback (most recent call last): this is not a JSON response"
exec cat >/dev/null
