package locklab;

import com.fasterxml.jackson.databind.JsonNode;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

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
 * one client per ttl_ms; a story asks for one.
 *
 * The watchdog's renewals are reported, every one (PROTOCOL.md, "Renewals"):
 * each client's wire (RedissonWire) sees each renewal script the watchdog
 * sends (org.redisson.renewal.LockTask.buildChunk: one EVAL for all the
 * client's locks, KEYS = the locks, ARGV = {lockWatchdogTimeout, each
 * lock's holder field}, "if hexists then pexpire", answered with the keys
 * it renewed) and its answer. See README.md.
 *
 * Re-entrant, as RLock is per thread: an adapter process is one client, so
 * an acquire of a lock it holds re-enters it as the same holder. A re-entry
 * and the release of an inner level report the level count the answering
 * server keeps for that holder (what getHoldCount() reads), not the
 * adapter's own count.
 */
public final class RedissonWatchdogLock implements Protocol.Adapter {

    public static void main(String[] args) {
        Protocol.serve(args, RedissonWatchdogLock::new);
    }

    private final Protocol.Endpoint endpoint;
    private final Map<Long, RedissonClient> clients = new HashMap<>();
    private final Map<RedissonClient, RedissonWire> wires = new HashMap<>();
    private final RedissonSupport.Holders holders = new RedissonSupport.Holders();

    RedissonWatchdogLock(List<Protocol.Endpoint> endpoints) {
        this.endpoint = endpoints.get(0);
    }

    @Override
    public Map<String, Object> hello() {
        Map<String, Object> hello = Protocol.hello("redisson-rlock-watchdog", RedissonSupport.VERSION);
        hello.put("renews", true);
        hello.put("renewals", true);
        hello.put("reentrant", true);
        return hello;
    }

    /** Builds the client for Redisson's default lockWatchdogTimeout (30 s): it warms the JVM and Netty up; a story's ttl_ms gets its own. */
    @Override
    public void connect() {
        RedissonSupport.connect(() -> clientFor(30_000));
    }

    /**
     * Builds the client of the story's lease before the story's clock starts
     * and runs one lock and unlock on a key of its own, as an application's
     * warm JVM has: inside the first acquire, the build and the cold code
     * took over 300 ms on a busy machine, a pause the story did not ask for.
     * The explicit lease keeps the watchdog out of it, so the renewal script
     * is first sent by the story's own lock.
     */
    @Override
    public void prepare(long ttlMs) throws Exception {
        RedissonSupport.connect(() -> clientFor(ttlMs));
        RLock warmUp = clientFor(ttlMs).getLock("locklab-warm-up");
        if (warmUp.tryLockAsync(0, ttlMs, TimeUnit.MILLISECONDS, WARM_UP_HOLDER).get())
            warmUp.unlockAsync(WARM_UP_HOLDER).get();
    }

    @Override
    public synchronized void close() {
        for (RedissonClient client : clients.values()) RedissonSupport.shutdown(client);
        clients.clear();
        wires.clear();
    }

    /** The holder id of the warm-up lock: no story's holder (RedissonSupport.newHolderId counts up from 1000001). */
    private static final long WARM_UP_HOLDER = 1;

    private synchronized RedissonClient clientFor(long ttlMs) {
        RedissonClient client = clients.get(ttlMs);
        if (client == null) {
            RedissonWire wire = new RedissonWire(0);
            wire.watch(RedissonWatchdogLock::renewal);  // before the client exists: no renewal goes unseen
            client = RedissonSupport.client(endpoint, ttlMs, wire);
            clients.put(ttlMs, client);
            wires.put(client, wire);
        }
        return client;
    }

    private synchronized RedissonWire wireOf(RedissonClient client) {
        return wires.get(client);
    }

    /**
     * One renewal the watchdog sent, reported once its answer came, for each
     * lock it named: renewed when the answer lists the key (the field was
     * there and PEXPIRE ran), refused when it does not (the field was gone:
     * nothing changed, and Redisson stops renewing that lock), refused when
     * Redis answered NOSCRIPT to the EVALSHA (nothing ran; Redisson sends the
     * EVAL next, a renewal of its own), unknown when no answer came (the 1 s
     * response timeout, a connection lost after sending; RenewalTask logs it
     * and renews again a third of a lease later).
     */
    private static void renewal(RedissonWire.Script script) {
        if (!script.renewal() || script.args().size() != script.keys().size() + 1) return;
        long ttl;
        try {
            ttl = Long.parseLong(script.args().get(0));
        } catch (NumberFormatException e) {
            return;
        }
        script.reply().whenComplete((renewed, error) -> {
            long answered = System.nanoTime();
            for (int i = 0; i < script.keys().size(); i++) {
                String lock = script.keys().get(i);
                String owner = script.args().get(i + 1);
                if (error != null) Protocol.renewed(lock, owner, ttl, script.sentNs(), answered, false, !noScript(error));
                else Protocol.renewed(lock, owner, ttl, script.sentNs(), answered,
                        renewed instanceof List<?> keys && keys.contains(lock), false);
            }
        });
    }

    /** Redis' NOSCRIPT error reply: the script was not run. */
    private static boolean noScript(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause())
            if (e.getMessage() != null && e.getMessage().startsWith("NOSCRIPT")) return true;
        return false;
    }

    @Override
    public Map<String, Object> acquire(JsonNode request) {
        RedissonClient client;
        try {
            client = clientFor(request.get("ttl_ms").asLong());
        } catch (Exception e) {
            return Protocol.fail("cannot connect: " + Protocol.describe(e));
        }
        String name = request.get("lock").asText();
        // A lab client is one thread of an application: while it holds the
        // lock, taking it again is Redisson's re-entry (the same holder).
        long holding = holders.holding(name);
        long threadId = holding >= 0 ? holding : RedissonSupport.newHolderId();
        RLock lock = client.getLock(name);
        Long attemptNs;
        // The lock script, again after an unlock message or the holder's PTTL
        // (RedissonLeaseLock): the wire tells which command took the lock.
        try (RedissonWire.Attempts attempts = RedissonSupport.attempts(wireOf(client), client, name, threadId)) {
            // leaseTime -1: no lease of its own, the watchdog renews the key.
            if (!lock.tryLockAsync(request.get("wait_ms").asLong(), -1, TimeUnit.MILLISECONDS, threadId).get())
                return Protocol.fail("held by another client");
            attemptNs = attempts.winningSentNs();
        } catch (Exception e) {
            return RedissonSupport.outcome(e);
        }
        Map<String, Object> response = holders.acquired(client, lock, threadId, attemptNs);
        response.put("validity_ms", null);  // renewed until unlock: no deadline of its own
        // A re-entry's depth is read from the server. A first level is not:
        // the read would cost a round trip an application does not make,
        // inside every acquire (the protocol's default depth is 1).
        if (holding >= 0) {
            Long depth = holdCount(client, name, threadId);
            if (depth != null) response.put("reentry", depth);
        }
        return response;
    }

    @Override
    public Map<String, Object> release(JsonNode request) {
        RedissonSupport.Holders.Holder holder = holders.of(request);
        // An inner level's release reports what is left; the last level's
        // does not (no round trip after it, as for a first acquire).
        boolean inner = holder != null && holder.levels() > 1;
        Map<String, Object> response = holders.release(request);
        if (inner && Boolean.TRUE.equals(response.get("ok"))) {
            RedissonClient client = clientOf(request.get("owner").asText());
            Long remaining = holdCount(client, holder.lock().getName(), holder.threadId());
            if (remaining != null) response.put("remaining", remaining);
        }
        return response;
    }

    /**
     * The holder's level count as the server that answers now keeps it (what
     * RLock.getHoldCount() reads: HGET of the holder's field, 0 when absent);
     * null when it cannot be read (then not reported).
     */
    private Long holdCount(RedissonClient client, String name, long threadId) {
        if (client == null) return null;
        try {
            String count = client.<String, String>getMap(name, StringCodec.INSTANCE)
                    .getAsync(RedissonSupport.owner(client, threadId)).get();
            return count == null ? 0L : Long.parseLong(count);
        } catch (Exception e) {
            return null;
        }
    }

    /** The client that produced `owner`, or null. */
    private synchronized RedissonClient clientOf(String owner) {
        for (RedissonClient client : clients.values())
            if (RedissonSupport.threadIdOf(client, owner) >= 0) return client;
        return null;
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
