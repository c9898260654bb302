package locklab;

import com.fasterxml.jackson.databind.JsonNode;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Redisson's RLock (getLock) with its watchdog, on one Redis node (the first
 * --redis endpoint): tryLock(waitTime, -1, ms), no lease time, so the lock
 * key gets lockWatchdogTimeout and the watchdog renews it every third of
 * that until unlock. The lease the lab asks for (ttl_ms) is what Redisson
 * calls lockWatchdogTimeout, a setting of the client (Config), so there is
 * one client per ttl_ms; a story asks for one. See README.md.
 */
public final class RedissonWatchdogLock implements Protocol.Adapter {

    public static void main(String[] args) {
        Protocol.serve(args, RedissonWatchdogLock::new);
    }

    private final Protocol.Endpoint endpoint;
    private final Map<Long, RedissonClient> clients = new HashMap<>();
    private final RedissonSupport.Holders holders = new RedissonSupport.Holders();

    RedissonWatchdogLock(List<Protocol.Endpoint> endpoints) {
        this.endpoint = endpoints.get(0);
    }

    @Override
    public Map<String, Object> hello() {
        Map<String, Object> hello = Protocol.hello("redisson-rlock-watchdog", RedissonSupport.VERSION);
        hello.put("renews", true);
        return hello;
    }

    /** Builds the client for Redisson's default lockWatchdogTimeout (30 s): it warms the JVM and Netty up; a story's ttl_ms gets its own. */
    @Override
    public void connect() {
        RedissonSupport.connect(() -> clientFor(30_000));
    }

    private synchronized RedissonClient clientFor(long ttlMs) {
        return clients.computeIfAbsent(ttlMs, ttl -> RedissonSupport.client(endpoint, ttl));
    }

    @Override
    public Map<String, Object> acquire(JsonNode request) {
        RedissonClient client;
        try {
            client = clientFor(request.get("ttl_ms").asLong());
        } catch (Exception e) {
            return Protocol.fail("cannot connect: " + Protocol.describe(e));
        }
        long threadId = RedissonSupport.newHolderId();
        RLock lock = client.getLock(request.get("lock").asText());
        try {
            // leaseTime -1: no lease of its own, the watchdog renews the key.
            if (!lock.tryLockAsync(request.get("wait_ms").asLong(), -1, TimeUnit.MILLISECONDS, threadId).get())
                return Protocol.fail("held by another client");
        } catch (Exception e) {
            return RedissonSupport.outcome(e);
        }
        Map<String, Object> response = holders.acquired(client, lock, threadId);
        response.put("validity_ms", null);  // renewed until unlock: no deadline of its own
        return response;
    }

    @Override
    public Map<String, Object> release(JsonNode request) {
        return holders.release(request);
    }

    @Override
    public Map<String, Object> extend(JsonNode request) {
        return Protocol.fail("unsupported: RLock has no extend (the watchdog renews the lease)");
    }

    /** isHeldByThread: HEXISTS of this holder's field; Redisson itself never tells its user a renewal failed (#4698). */
    @Override
    public Map<String, Object> held(JsonNode request) {
        RedissonSupport.Holders.Holder holder = holders.of(request);
        if (holder == null) return Protocol.fail("unknown owner");
        try {
            Map<String, Object> response = Protocol.ok();
            response.put("held", holder.lock().isHeldByThreadAsync(holder.threadId()).get());
            return response;
        } catch (Exception e) {
            return Protocol.fail("cannot tell: " + Protocol.describe(RedissonSupport.unwrap(e)));
        }
    }
}
