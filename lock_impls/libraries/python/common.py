"""What the redis-py adapters of this folder share, beside ../protocol.py:
what a redis-py error means for the outcome, the connect request, closing
the clients when the lab resets the adapter, and a recorder of the Redis
errors a library only logs (pottery, aioredlock catch them and log them)."""
import logging
import os
import re
import sys
import threading

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import protocol  # noqa: E402,F401  (../protocol.py)

# Errors raised while connecting, before a command was written (redis-py).
NOT_SENT = re.compile(r"^(Timeout connecting to server|Error (\S+ )?connecting to )")


def sent(error):
    """Whether a timeout / lost connection may have hit after the command
    was written (redis-py and aioredis messages)."""
    return not NOT_SENT.match(str(error))


def outcome_of(error):
    """A timeout or a broken connection may have hit after Redis ran the
    command: unknown, unless it happened while connecting. Any other Redis
    error is Redis refusing the command (e.g. READONLY): definitely not."""
    from redis.exceptions import ConnectionError, TimeoutError
    if isinstance(error, (ConnectionError, TimeoutError)) and sent(error):
        return {"ok": False, "unknown": True, "error": "%s: %s" % (type(error).__name__, error)}
    return {"ok": False, "error": "%s: %s" % (type(error).__name__, error)}


def ping_all(clients):
    """The connect request: open each client's connection now."""
    from redis.exceptions import RedisError
    errors = []
    for client in clients:
        try:
            client.ping()
        except RedisError as error:
            errors.append("%s: %s" % (type(error).__name__, error))
    if errors:
        return {"ok": False, "error": "; ".join(errors)}
    return {"ok": True}


def close_all(clients):
    """Closes every connection of these redis-py clients, idle or in use:
    redis-py 4's Redis.close() only gives its connection back to the pool,
    where it stays open."""
    for client in clients:
        client.connection_pool.disconnect()


class LoggedErrors(logging.Handler):
    """Collects the exceptions a library logs (logger.exception / error with
    exc_info) while an operation runs, from any thread."""

    def __init__(self, logger_name):
        super().__init__(level=logging.DEBUG)
        self.guard = threading.Lock()
        self.errors = []
        logger = logging.getLogger(logger_name)
        logger.addHandler(self)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False

    def emit(self, record):
        if record.levelno >= logging.ERROR:
            error = record.exc_info[1] if record.exc_info else None
            with self.guard:
                self.errors.append((record.getMessage(), error))
            sys.stderr.write("%s: %s%s\n" % (record.name, record.getMessage(),
                                             " (%r)" % error if error else ""))

    def take(self):
        with self.guard:
            errors, self.errors = self.errors, []
        return errors
