package locklab;

import com.fasterxml.jackson.databind.JsonNode;
import org.redisson.RedissonFencedLock;
import org.redisson.api.RFencedLock;

import java.util.List;
import java.util.Map;
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

    private final RedissonSupport.SingleClient client;
    private final RedissonSupport.Holders holders = new RedissonSupport.Holders();

    RedissonFencedLockAdapter(List<Protocol.Endpoint> endpoints) {
        this.client = new RedissonSupport.SingleClient(endpoints);
    }

    @Override
    public Map<String, Object> hello() {
        Map<String, Object> hello = Protocol.hello("redisson-fenced-lock", RedissonSupport.VERSION);
        hello.put("fencing", true);
        return hello;
    }

    @Override
    public void connect() {
        client.connect();
    }

    @Override
    public void close() {
        client.close();
    }

    @Override
    public Map<String, Object> acquire(JsonNode request) {
        long threadId = RedissonSupport.newHolderId();
        String name = request.get("lock").asText();
        RFencedLock lock = client.get().getFencedLock(name);
        Long token;
        Long attemptNs;
        // As RLock's tryLock: the script, again after an unlock message or the
        // holder's PTTL; the wire tells which one took the lock ({-1, token}).
        try (RedissonWire.Attempts attempts = RedissonSupport.attempts(client.wire(), client.get(), name, threadId)) {
            token = ((RedissonFencedLock) lock).tryLockAndGetTokenAsync(
                    request.get("wait_ms").asLong(), request.get("ttl_ms").asLong(), TimeUnit.MILLISECONDS, threadId).get();
            attemptNs = token == null ? null : attempts.winningSentNs();
        } catch (Exception e) {
            return RedissonSupport.outcome(e);
        }
        if (token == null) return Protocol.fail("held by another client");
        Map<String, Object> response = holders.acquired(client.get(), lock, threadId, attemptNs);
        response.put("token", token);
        return response;
    }

    @Override
    public Map<String, Object> release(JsonNode request) {
        return holders.release(request);
    }

    @Override
    public Map<String, Object> extend(JsonNode request) {
        return Protocol.fail("unsupported: RFencedLock has no extend");
    }
}
