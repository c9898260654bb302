package locklab;

import com.fasterxml.jackson.databind.JsonNode;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import java.net.ConnectException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * ShedLock's Redis provider (shedlock-provider-redis-spring,
 * RedisLockProvider) on Spring Data Redis with Jedis, on one Redis node
 * (the first --redis endpoint):
 *
 *   (default)       RedisLockProvider.Builder(factory).build(): safeUpdate
 *                   false, ShedLock's default: unlock is a plain DEL of the
 *                   key, extend a SET XX PX (ShedLock #2583).
 *   --safe-update   .safeUpdate(true): unlock and extend are Lua scripts
 *                   that act only if the key still holds this lock's value.
 *
 * lock(new LockConfiguration(now, name, lockAtMostFor = ttl_ms,
 * lockAtLeastFor = 0)): SET job-lock:default:<name> <value> NX PX ttl_ms.
 * ShedLock never waits (it skips a locked task); a client that must wait
 * tries again every 100 ms until wait_ms has passed, as an application
 * looping on lock() would; validity_ms is lockAtMostFor from the attempt
 * that won. See README.md.
 */
public final class ShedLockRedis implements Protocol.Adapter {

    public static void main(String[] args) {
        boolean safeUpdate = List.of(args).contains("--safe-update");
        Protocol.serve(args, endpoints -> new ShedLockRedis(endpoints, safeUpdate));
    }

    /** How long a waiting client sleeps between two attempts. */
    static final long RETRY_MS = 100;

    private final Protocol.Endpoint endpoint;
    private final boolean safeUpdate;
    private volatile JedisConnectionFactory factory;
    private volatile LockProvider provider;
    private final Map<String, SimpleLock> holders = new ConcurrentHashMap<>();

    ShedLockRedis(List<Protocol.Endpoint> endpoints, boolean safeUpdate) {
        this.endpoint = endpoints.get(0);
        this.safeUpdate = safeUpdate;
    }

    @Override
    public Map<String, Object> hello() {
        return Protocol.hello(safeUpdate ? "shedlock-redis-safe-update" : "shedlock-redis",
                Protocol.versionOf(LockProvider.class, "net.javacrumbs.shedlock", "shedlock-core"));
    }

    /** A Jedis pool (SpringRedis.connectionFactory). */
    @Override
    public synchronized void connect() {
        if (provider != null) return;
        JedisConnectionFactory built = SpringRedis.connectionFactory(endpoint);
        factory = built;
        provider = new RedisLockProvider.Builder(built).safeUpdate(safeUpdate).build();
    }

    /**
     * Its lock() is a SET NX PX, no script; with safeUpdate its unlock runs a
     * script, which is flushed from Redis's cache again (Adapter.warmUp).
     */
    @Override
    public void warmUp(long ttlMs) {
        Protocol.lockOnce(this, ttlMs);
        if (!safeUpdate) return;
        try (var connection = factory.getConnection()) {
            connection.scriptingCommands().scriptFlush();
        }
    }

    /** Forgets every holder (nothing unlocked) and closes the Jedis pool. */
    @Override
    public synchronized void close() {
        holders.clear();
        if (factory != null) factory.destroy();
        provider = null;
        factory = null;
    }

    @Override
    public Map<String, Object> acquire(JsonNode request) throws InterruptedException {
        String name = request.get("lock").asText();
        Duration lease = Duration.ofMillis(request.get("ttl_ms").asLong());
        long started = System.nanoTime();
        long deadline = started + request.get("wait_ms").asLong() * 1_000_000;
        while (true) {
            Optional<SimpleLock> lock;
            long attempt = System.nanoTime();
            try {
                lock = provider.lock(new LockConfiguration(Instant.now(), name, lease, Duration.ZERO));
            } catch (Exception e) {
                return outcome(e);
            }
            if (lock.isPresent()) {
                String owner = UUID.randomUUID().toString();
                holders.put(owner, lock.get());
                Map<String, Object> response = Protocol.ok();
                response.put("owner", owner);
                // The lock's lockAtMostUntil, which ShedLock gives its user: lockAtMostFor
                // from the attempt that won (LockConfiguration's createdAt), not from
                // the first attempt of the loop.
                response.put("validity_ms", lease.toMillis() + (attempt - started) / 1_000_000);
                // The loop is the adapter's: each lock() sends one command, SET key
                // value NX PX (InternalRedisLockProvider.lock -> createLock ->
                // SpringRedisLockTemplate.setIfAbsent), and returns a lock only when
                // that SET answered OK. attempt is read before lock() borrows a
                // connection and sends it: no later than the SET that took the lock.
                response.put("attempt_ns", attempt);
                return response;
            }
            if (System.nanoTime() + RETRY_MS * 1_000_000 > deadline) return Protocol.fail("held by another client");
            Thread.sleep(RETRY_MS);
        }
    }

    /** unlock(): returns nothing; with safeUpdate false a DEL of whatever the key holds now. */
    @Override
    public Map<String, Object> release(JsonNode request) {
        SimpleLock lock = holders.remove(request.get("owner").asText());
        if (lock == null) return Protocol.fail("not held: not a lock of this client");
        try {
            lock.unlock();
            return Protocol.ok();
        } catch (Exception e) {
            return outcome(e);
        }
    }

    /** extend(lockAtMostFor, 0): a new SimpleLock, or empty when the key is gone (safeUpdate false: SET XX PX, whoever holds it). */
    @Override
    public Map<String, Object> extend(JsonNode request) {
        String owner = request.get("owner").asText();
        SimpleLock lock = holders.get(owner);
        if (lock == null) return Protocol.fail("not held: not a lock of this client");
        try {
            Optional<SimpleLock> extended = lock.extend(Duration.ofMillis(request.get("ttl_ms").asLong()), Duration.ZERO);
            if (extended.isEmpty()) {
                holders.remove(owner);
                return Protocol.fail("not held: extend found no lock");
            }
            holders.put(owner, extended.get());
            return Protocol.ok();
        } catch (Exception e) {
            return outcome(e);
        }
    }

    /** A connection refused or not made: nothing sent. Anything else (a read timeout, a reset): unknown. */
    static Map<String, Object> outcome(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause())
            if (e instanceof ConnectException) return Protocol.fail("not sent: " + Protocol.describe(error));
        return Protocol.unknown(Protocol.describe(error));
    }
}
