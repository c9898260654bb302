#!/bin/sh
# A broken adapter: never reads a request, never answers, ignores the end of stdin.
exec sleep 60
