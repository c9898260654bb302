package locklab;

import com.fasterxml.jackson.databind.JsonNode;
import org.redisson.RedissonFencedLock;
import org.redisson.api.RFencedLock;
import org.redisson.api.RedissonClient;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Redisson's RFencedLock (getFencedLock), on one Redis node (the first
 * --redis endpoint): tryLockAndGetToken(waitTime, leaseTime = ttl_ms, ms),
 * the RLock hash script plus INCR of "redisson_lock_token:{name}" in the
 * same script; the token is the fencing token the lab's resource checks.
 * An explicit lease, so no watchdog, as the built-in fenced (SET NX PX +
 * INCR). The call with an explicit holder id is RedissonFencedLock's
 * public tryLockAndGetTokenAsync(wait, lease, unit, threadId) (not on the
 * RFencedLock interface). See README.md.
 */
public final class RedissonFencedLockAdapter implements Protocol.Adapter {

    public static void main(String[] args) {
        Protocol.serve(args, RedissonFencedLockAdapter::new);
    }

    private final Protocol.Endpoint endpoint;
    private volatile RedissonClient client;
    private final Map<String, Holder> holders = new ConcurrentHashMap<>();

    private record Holder(RFencedLock lock, long threadId) {}

    RedissonFencedLockAdapter(List<Protocol.Endpoint> endpoints) {
        this.endpoint = endpoints.get(0);
    }

    @Override
    public Map<String, Object> hello() {
        Map<String, Object> hello = Protocol.hello("redisson-fenced-lock", RedissonSupport.VERSION);
        hello.put("fencing", true);
        return hello;
    }

    @Override
    public synchronized void connect() {
        if (client == null) RedissonSupport.connect(() -> client = RedissonSupport.client(endpoint, 30_000));
    }

    @Override
    public Map<String, Object> acquire(JsonNode request) {
        long threadId = RedissonSupport.newHolderId();
        RFencedLock lock = client.getFencedLock(request.get("lock").asText());
        Long token;
        try {
            token = ((RedissonFencedLock) lock).tryLockAndGetTokenAsync(
                    request.get("wait_ms").asLong(), request.get("ttl_ms").asLong(), TimeUnit.MILLISECONDS, threadId).get();
        } catch (Exception e) {
            return RedissonSupport.outcome(e);
        }
        if (token == null) return Protocol.fail("held by another client");
        String owner = RedissonSupport.owner(client, threadId);
        holders.put(owner, new Holder(lock, threadId));
        Map<String, Object> response = RedissonSupport.acquired(owner);
        response.put("token", token);
        return response;
    }

    @Override
    public Map<String, Object> release(JsonNode request) {
        Holder holder = holders.remove(request.get("owner").asText());
        if (holder == null) return RedissonSupport.notAnAcquisition();
        return RedissonSupport.unlock(holder.lock(), holder.threadId());
    }

    @Override
    public Map<String, Object> extend(JsonNode request) {
        return Protocol.fail("unsupported: RFencedLock has no extend");
    }
}
