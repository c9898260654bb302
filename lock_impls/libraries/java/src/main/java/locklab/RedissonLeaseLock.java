package locklab;

import com.fasterxml.jackson.databind.JsonNode;
import org.redisson.api.RLock;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Redisson's RLock (getLock) with an explicit lease, on one Redis node (the
 * first --redis endpoint): tryLock(waitTime, leaseTime = ttl_ms, ms). A
 * lease time turns the watchdog off: the key expires ttl_ms after the
 * acquire, whatever the holder does. Same hash, scripts and pub/sub wait as
 * the watchdog mode (RedissonWatchdogLock). See README.md.
 */
public final class RedissonLeaseLock implements Protocol.Adapter {

    public static void main(String[] args) {
        Protocol.serve(args, RedissonLeaseLock::new);
    }

    private final RedissonSupport.SingleClient client;
    private final RedissonSupport.Holders holders = new RedissonSupport.Holders();

    RedissonLeaseLock(List<Protocol.Endpoint> endpoints) {
        this.client = new RedissonSupport.SingleClient(endpoints);
    }

    @Override
    public Map<String, Object> hello() {
        return Protocol.hello("redisson-rlock-lease", RedissonSupport.VERSION);
    }

    /** One client; lockWatchdogTimeout stays Redisson's default (30 s): no lock here uses the watchdog. */
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
        RLock lock = client.get().getLock(name);
        long ttl = request.get("ttl_ms").asLong();
        // tryLock sends the lock script, and while the lock is held subscribes to
        // the unlock channel and sends it again (at an unlock message, or once the
        // holder's PTTL has passed) until it takes the lock or wait_ms runs out:
        // the wire tells which of those commands took it, and when it was sent.
        Long attemptNs;
        try (RedissonWire.Attempts attempts = RedissonSupport.attempts(client.wire(), client.get(), name, threadId)) {
            if (!lock.tryLockAsync(request.get("wait_ms").asLong(), ttl, TimeUnit.MILLISECONDS, threadId).get())
                return Protocol.fail("held by another client");
            attemptNs = attempts.winningSentNs();
        } catch (Exception e) {
            return RedissonSupport.outcome(e);
        }
        // validity_ms absent: ttl_ms from the start of the acquire, the lease the user asked for
        // (tryLock returns a boolean and tells nothing more); the lab counts it from attempt_ns.
        return holders.acquired(client.get(), lock, threadId, attemptNs);
    }

    @Override
    public Map<String, Object> release(JsonNode request) {
        return holders.release(request);
    }

    @Override
    public Map<String, Object> extend(JsonNode request) {
        return Protocol.fail("unsupported: RLock has no extend (a second lock() by the holder re-applies a lease but counts as re-entry)");
    }
}
