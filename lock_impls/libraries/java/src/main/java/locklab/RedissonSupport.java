package locklab;

import com.fasterxml.jackson.databind.JsonNode;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisException;
import org.redisson.client.RedisReadonlyException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.WriteRedisConnectionException;
import org.redisson.config.Config;

import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the Redisson adapters share: the client's configuration, holder ids,
 * the acquisitions a release unlocks, and what a Redisson exception means
 * for the outcome.
 */
final class RedissonSupport {

    static final String VERSION = Protocol.versionOf(Redisson.class, "org.redisson", "redisson");

    private RedissonSupport() {}

    /**
     * One Redisson client on one Redis node (a fault proxy), with Redisson's
     * defaults except: a 1 s command timeout (default 3 s), a 0.5 s connect
     * timeout (default 10 s) and no retries (default retryAttempts 4 with a
     * 1-2 s delay), so that a partitioned server gives an outcome within
     * about a second; and lockWatchdogTimeout, the lease of a lock taken
     * without a lease time, which the watchdog renews every third of. `wire`
     * sees what the client sends (RedissonWire).
     */
    static RedissonClient client(Protocol.Endpoint endpoint, long lockWatchdogTimeoutMs, RedissonWire wire) {
        long started = System.nanoTime();
        Config config = new Config();
        config.setNettyHook(wire);
        config.setLockWatchdogTimeout(lockWatchdogTimeoutMs);
        config.setUsername(Protocol.username());
        config.setPassword(Protocol.password());
        config.useSingleServer()
                .setAddress(endpoint.uri())
                .setTimeout(1000)
                .setConnectTimeout(500)
                .setRetryAttempts(0)
                .setConnectionMinimumIdleSize(1);
        RedissonClient client = Redisson.create(config);
        System.err.printf("redisson client for %s (lockWatchdogTimeout %d ms) ready in %d ms%n",
                endpoint.uri(), lockWatchdogTimeoutMs, (System.nanoTime() - started) / 1_000_000);
        return client;
    }

    /**
     * Closes a client for the reset op: its event loops, timers (the
     * watchdog's) and connections, at once (no quiet period) and waiting
     * up to 2 s for its threads to end.
     */
    static void shutdown(RedissonClient client) {
        client.shutdown(0, 2, java.util.concurrent.TimeUnit.SECONDS);
    }

    /**
     * The connect op: builds a client, trying up to three times, since a
     * JVM starting cold beside others may miss the 0.5 s connect timeout
     * (this is before the story's clock starts).
     */
    static void connect(java.util.function.Supplier<?> build) {
        for (int attempt = 1; ; attempt++) {
            try {
                build.get();
                return;
            } catch (RuntimeException e) {
                if (attempt == 3) throw e;
                System.err.println("connect attempt " + attempt + ": " + Protocol.describe(e));
            }
        }
    }

    /**
     * Redisson identifies a holder by its client's id and a thread id. The
     * adapters use the async API with an explicit thread id, a new one per
     * acquisition, so that each acquisition is its own holder whatever
     * thread runs it.
     */
    private static final AtomicLong threadIds = new AtomicLong(1_000_000);

    static long newHolderId() {
        return threadIds.incrementAndGet();
    }

    /** The hash field Redisson stores for a holder: "<client id>:<thread id>" (RedissonBaseLock.getLockName). */
    static String owner(RedissonClient client, long threadId) {
        return client.getId() + ":" + threadId;
    }

    /** The thread id of an owner this client produced, or -1 for another client's. */
    static long threadIdOf(RedissonClient client, String owner) {
        String prefix = client.getId() + ":";
        if (!owner.startsWith(prefix)) return -1;
        try {
            return Long.parseLong(owner.substring(prefix.length()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static Throwable unwrap(Throwable error) {
        while ((error instanceof ExecutionException || error instanceof CompletionException) && error.getCause() != null)
            error = error.getCause();
        return error;
    }

    /**
     * The outcome of a failed lock call. IllegalMonitorStateException: the
     * unlock script found no field of this holder and changed nothing.
     * A connection that could not be made: nothing was sent. An error reply
     * (READONLY, ERR): Redis refused it. Anything else (a timeout, a
     * connection lost or a write that failed after sending): unknown.
     */
    static Map<String, Object> outcome(Throwable thrown) {
        Throwable error = unwrap(thrown);
        String text = Protocol.describe(error);
        if (error instanceof IllegalMonitorStateException) return Protocol.fail("not held: " + text);
        // A waiter whose wait ran out while it subscribed to the unlock channel
        // (PublishSubscribeService.timeout): its last attempt had found the
        // lock held, and no lock command follows a subscription that failed.
        if (error instanceof RedisTimeoutException && error.getMessage() != null
                && error.getMessage().startsWith("Unable to acquire subscription lock"))
            return Protocol.fail("not acquired: " + text);
        if (error instanceof RedisTimeoutException) return Protocol.unknown(text);
        if (error instanceof RedisConnectionException && !(error instanceof WriteRedisConnectionException))
            return Protocol.fail("not sent: " + text);
        if (error instanceof RedisReadonlyException) return Protocol.fail("refused: " + text);
        if (error instanceof RedisException && error.getClass() == RedisException.class
                && error.getMessage() != null && error.getMessage().startsWith("ERR"))
            return Protocol.fail("refused: " + text);
        return Protocol.unknown(text);
    }

    /** The answer to an acquire that took the lock as `owner`; attempt_ns when the winning command is known (else null). */
    static Map<String, Object> acquired(String owner, Long attemptNs) {
        Map<String, Object> response = Protocol.ok();
        response.put("owner", owner);
        if (attemptNs != null) response.put("attempt_ns", attemptNs);
        return response;
    }

    /**
     * The lock commands of the acquisition `threadId` of `lock` on this one
     * node, watched on `wire` while tryLock runs (RedissonWire.Attempts).
     */
    static RedissonWire.Attempts attempts(RedissonWire wire, RedissonClient client, String lock, long threadId) {
        return new RedissonWire.Attempts(java.util.List.of(wire), lock, Map.of(wire.node, owner(client, threadId)));
    }

    /** The answer to a release or extend of an owner this client never acquired. */
    static Map<String, Object> notAnAcquisition() {
        return Protocol.fail("not held: the owner is not an acquisition of this client (Redisson names holders by client id and thread id)");
    }

    /** unlock() of `lock` by its holder `threadId`: released, or what the error says. */
    static Map<String, Object> unlock(RLock lock, long threadId) {
        try {
            lock.unlockAsync(threadId).get();
            return Protocol.ok();
        } catch (Exception e) {
            return outcome(e);
        }
    }

    /**
     * One client on the first --redis endpoint with Redisson's default
     * lockWatchdogTimeout (30 s: the locks that use it take explicit
     * leases), built by the connect op before the story's clock starts.
     */
    static final class SingleClient {
        private final Protocol.Endpoint endpoint;
        private volatile RedissonClient client;
        private final RedissonWire wire = new RedissonWire(0);

        SingleClient(java.util.List<Protocol.Endpoint> endpoints) {
            this.endpoint = endpoints.get(0);
        }

        synchronized void connect() {
            if (client == null) RedissonSupport.connect(() -> client = client(endpoint, 30_000, wire));
        }

        RedissonClient get() {
            return client;
        }

        synchronized void close() {
            if (client != null) shutdown(client);
            client = null;
        }

        RedissonWire wire() {
            return wire;
        }
    }

    /**
     * The acquisitions of an adapter whose holders each hold one RLock, by
     * owner: what release() unlocks. An owner taken again (Redisson's
     * re-entry: the same holder locks what it holds) counts its levels, and
     * is forgotten once its last level is released.
     */
    static final class Holders {
        static final class Holder {
            private final RLock lock;
            private final long threadId;
            private int levels = 1;  // acquired and not yet released, as the adapter counts them

            Holder(RLock lock, long threadId) {
                this.lock = lock;
                this.threadId = threadId;
            }

            RLock lock() {
                return lock;
            }

            long threadId() {
                return threadId;
            }

            int levels() {
                return levels;
            }
        }

        private final Map<String, Holder> byOwner = new ConcurrentHashMap<>();

        /** Notes that holder `threadId` of `client` took `lock` (again, when it holds it); the acquire's answer (attempt_ns when known). */
        Map<String, Object> acquired(RedissonClient client, RLock lock, long threadId, Long attemptNs) {
            String owner = owner(client, threadId);
            byOwner.compute(owner, (key, held) -> {
                if (held == null) return new Holder(lock, threadId);
                held.levels++;
                return held;
            });
            return RedissonSupport.acquired(owner, attemptNs);
        }

        /** The acquisition of the request's owner, or null. */
        Holder of(JsonNode request) {
            return byOwner.get(request.get("owner").asText());
        }

        /** The holder id that holds the lock named `name` here, or -1: taking it again is a re-entry. */
        long holding(String name) {
            for (Holder holder : byOwner.values())
                if (holder.lock.getName().equals(name)) return holder.threadId;
            return -1;
        }

        /** unlock() of one level by the request's owner, forgotten after its last. */
        Map<String, Object> release(JsonNode request) {
            String owner = request.get("owner").asText();
            // The count changes inside the map's own update, as acquired() changes it.
            Holder[] released = {null};
            byOwner.computeIfPresent(owner, (key, held) -> {
                released[0] = held;
                return --held.levels == 0 ? null : held;
            });
            if (released[0] == null) return notAnAcquisition();
            return unlock(released[0].lock, released[0].threadId);
        }
    }
}
