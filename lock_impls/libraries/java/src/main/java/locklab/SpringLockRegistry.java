package locklab;

import com.fasterxml.jackson.databind.JsonNode;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.locks.DistributedLock;

import java.net.ConnectException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Spring Integration's RedisLockRegistry (spring-integration-redis) on
 * Spring Data Redis with Jedis, on one Redis node (the first --redis
 * endpoint), with the registry's defaults: the spin lock (RedisSpinLock),
 * no renewal (no renewal task scheduler).
 *
 * One registry per adapter process (one lab client): new
 * RedisLockRegistry(factory, "locklab"). Its clientId, a UUID, is the value
 * of every key it sets. Acquire is obtain(L).tryLock(wait_ms, ttl_ms): the
 * obtain script (GET; PEXPIRE when the value is ours, SET PX ttl_ms when
 * there is no key), again every idleBetweenTries (100 ms) until wait_ms has
 * passed. The lock is also a local ReentrantLock that only the thread that
 * locked may unlock, so each acquisition runs on a single-thread executor of
 * its own, and its release (unlock(): the value-checked delete) runs there
 * too. Extend is the registry's renewLock(L, ttl_ms). The library hands out
 * no deadline: no validity_ms. See README.md.
 */
public final class SpringLockRegistry implements Protocol.Adapter {

    public static void main(String[] args) {
        Protocol.serve(args, SpringLockRegistry::new);
    }

    /** One acquisition: the lock and the thread that locked it. */
    private record Holder(String name, DistributedLock lock, ExecutorService thread) {}

    /** What tryLock answered, and when the obtain script that answered true was sent (null: not seen). */
    private record Attempt(boolean acquired, Long sentNs) {}

    private final Protocol.Endpoint endpoint;
    private volatile RedisLockRegistry registry;
    private volatile JedisConnectionFactory factory;
    private final Map<String, Holder> holders = new ConcurrentHashMap<>();

    SpringLockRegistry(List<Protocol.Endpoint> endpoints) {
        this.endpoint = endpoints.get(0);
    }

    @Override
    public Map<String, Object> hello() {
        return Protocol.hello("spring-redis-lock-registry",
                Protocol.versionOf(RedisLockRegistry.class, "org.springframework.integration", "spring-integration-redis"));
    }

    /** A Jedis pool (SpringRedis.connectionFactory). */
    @Override
    public synchronized void connect() {
        if (registry != null) return;
        factory = SpringRedis.connectionFactory(endpoint);
        // Its connections watched (SpringRedis.watchingScripts): which obtain script took the lock.
        registry = new RedisLockRegistry(SpringRedis.watchingScripts(factory), "locklab");
    }

    /** The registry's executor, each holder's thread (nothing unlocked), then the Jedis pool. */
    @Override
    public synchronized void close() {
        if (registry != null) registry.destroy();
        for (Holder holder : holders.values()) holder.thread().shutdownNow();
        holders.clear();
        if (factory != null) factory.destroy();
        registry = null;
        factory = null;
    }

    /** tryLock(wait_ms, ttl_ms) on a thread of its own, which keeps the local lock until release. */
    @Override
    public Map<String, Object> acquire(JsonNode request) throws InterruptedException {
        String name = request.get("lock").asText();
        Duration wait = Duration.ofMillis(request.get("wait_ms").asLong());
        Duration ttl = Duration.ofMillis(request.get("ttl_ms").asLong());
        ExecutorService thread = Executors.newSingleThreadExecutor(runnable -> {
            Thread t = new Thread(runnable, "lock-holder");
            t.setDaemon(true);
            return t;
        });
        DistributedLock lock = registry.obtain(name);
        Attempt attempt;
        try {
            // tryLock runs the obtain script (RedisLock.obtainLock) on this thread,
            // again every idleBetweenTries while it answers false
            // (RedisSpinLock.tryRedisLockInner), and returns true at the first true
            // answer: that script took the lock (SET PX, or PEXPIRE of a key that
            // already held this registry's clientId). The watch notes when it was sent.
            attempt = on(thread, () -> {
                SpringRedis.ScriptWatch watch = SpringRedis.watch("locklab:" + name);
                try {
                    return new Attempt(lock.tryLock(wait, ttl), watch.trueSentNs());
                } finally {
                    SpringRedis.unwatch();
                }
            });
        } catch (ExecutionException e) {
            thread.shutdown();
            return outcome(e.getCause());
        }
        if (!attempt.acquired()) {
            thread.shutdown();
            return Protocol.fail("held by another client");
        }
        String owner = UUID.randomUUID().toString();
        holders.put(owner, new Holder(name, lock, thread));
        Map<String, Object> response = Protocol.ok();
        response.put("owner", owner);
        if (attempt.sentNs() != null) response.put("attempt_ns", attempt.sentNs());
        return response;
    }

    /**
     * unlock() on the thread that locked: deletes the key only if it still
     * holds this registry's clientId; ConcurrentModificationException when it
     * does not (the lease ran out; nothing deleted). The local lock is
     * released either way.
     */
    @Override
    public Map<String, Object> release(JsonNode request) throws InterruptedException {
        Holder holder = holders.remove(request.get("owner").asText());
        if (holder == null) return Protocol.fail("not held: not a lock of this client");
        try {
            on(holder.thread(), () -> {
                holder.lock().unlock();
                return null;
            });
            return Protocol.ok();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ConcurrentModificationException)
                return Protocol.fail("not held: " + Protocol.describe(e.getCause()));
            return outcome(e.getCause());
        } finally {
            holder.thread().shutdown();
        }
    }

    /** renewLock(L, ttl_ms): PEXPIRE if the key still holds this registry's clientId, else IllegalStateException. */
    @Override
    public Map<String, Object> extend(JsonNode request) {
        Holder holder = holders.get(request.get("owner").asText());
        if (holder == null) return Protocol.fail("not held: not a lock of this client");
        try {
            registry.renewLock(holder.name(), Duration.ofMillis(request.get("ttl_ms").asLong()));
            return Protocol.ok();
        } catch (IllegalStateException e) {
            return Protocol.fail("not held: " + Protocol.describe(e));
        } catch (Exception e) {
            return outcome(e);
        }
    }

    private static <T> T on(ExecutorService thread, Callable<T> call) throws InterruptedException, ExecutionException {
        return thread.submit(call).get();
    }

    /** A connection refused or not made: nothing sent. Anything else (a read timeout, a reset): unknown. */
    static Map<String, Object> outcome(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause())
            if (e instanceof ConnectException) return Protocol.fail("not sent: " + Protocol.describe(error));
        return Protocol.unknown(Protocol.describe(error));
    }
}
