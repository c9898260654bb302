"""What the test adapters beside this file share: their one endpoint, and
the protocol's JSON lines (harness/adapter/PROTOCOL.md) read and written
plainly, so that each adapter can answer exactly as its test needs."""
import json
import sys


def endpoint(args):
    """The host and port of the first --redis endpoint."""
    return first_endpoint(args.redis)


def first_endpoint(endpoints):
    """The host and port of the first of "host:port,host:port"."""
    host, port = endpoints.split(",")[0].rsplit(":", 1)
    return host, int(port)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def requests():
    """Each request as (id, op, request), until stdin closes."""
    for line in sys.stdin:
        request = json.loads(line)
        yield request["id"], request["op"], request
