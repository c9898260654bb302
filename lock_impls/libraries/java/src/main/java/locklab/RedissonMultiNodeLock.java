package locklab;

import com.fasterxml.jackson.databind.JsonNode;
import org.redisson.Redisson;
import org.redisson.RedissonLock;
import org.redisson.RedissonMultiLock;
import org.redisson.RedissonRedLock;
import org.redisson.api.RFuture;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Redisson's locks over several independent masters, one RLock per --redis
 * endpoint (each from its own client, as the Redisson docs build them):
 *
 *   --multi   RedissonMultiLock: every node must be locked.
 *   --redlock RedissonRedLock (deprecated since 3.12.5, still shipped): a
 *             majority (N/2+1) must be locked; per-node wait = wait / N.
 *
 * tryLock(waitTime, leaseTime = ttl_ms, ms), an explicit lease: while it
 * acquires, each node's key gets 2 × waitTime (when waitTime > 0), and once
 * enough nodes are locked every locked node gets an unconditional PEXPIRE
 * of leaseTime. No elapsed-time or drift check (no Redlock validity).
 * See README.md.
 */
public final class RedissonMultiNodeLock implements Protocol.Adapter {

    public static void main(String[] args) {
        boolean redlock = List.of(args).contains("--redlock");
        Protocol.serve(args, endpoints -> new RedissonMultiNodeLock(endpoints, redlock));
    }

    /**
     * A node's RLock that notes whether any of its lock or unlock calls
     * failed (a timeout, a lost connection): the multi-lock swallows a
     * node's error as "not locked" and answers false, while that node may
     * keep the key.
     */
    static final class TappedLock extends RedissonLock {
        volatile Throwable error;

        TappedLock(RedissonClient client, String name) {
            super(((Redisson) client).getCommandExecutor(), name);
        }

        @Override
        public RFuture<Boolean> tryLockAsync(long waitTime, long leaseTime, TimeUnit unit, long threadId) {
            RFuture<Boolean> future = super.tryLockAsync(waitTime, leaseTime, unit, threadId);
            future.whenComplete((result, e) -> { if (e != null) error = e; });
            return future;
        }

        @Override
        public RFuture<Void> unlockAsync(long threadId) {
            RFuture<Void> future = super.unlockAsync(threadId);
            future.whenComplete((result, e) -> { if (e != null) error = e; });
            return future;
        }
    }

    private final List<Protocol.Endpoint> endpoints;
    private final boolean redlock;
    private final List<RedissonClient> clients = new ArrayList<>();
    private final List<RedissonWire> wires = new ArrayList<>();
    private final Map<String, Holder> holders = new ConcurrentHashMap<>();

    private record Holder(List<TappedLock> nodes, long threadId) {}

    RedissonMultiNodeLock(List<Protocol.Endpoint> endpoints, boolean redlock) {
        this.endpoints = endpoints;
        this.redlock = redlock;
    }

    @Override
    public Map<String, Object> hello() {
        Map<String, Object> hello = Protocol.hello(redlock ? "redisson-redlock" : "redisson-multilock", RedissonSupport.VERSION);
        hello.put("multi_node", true);
        return hello;
    }

    @Override
    public synchronized void connect() {
        while (clients.size() < endpoints.size()) {
            int node = clients.size();
            Protocol.Endpoint endpoint = endpoints.get(node);
            RedissonWire wire = new RedissonWire(node);
            RedissonSupport.connect(() -> clients.add(RedissonSupport.client(endpoint, 30_000, wire)));
            wires.add(wire);
        }
    }

    @Override
    public synchronized void close() {
        for (RedissonClient client : clients) RedissonSupport.shutdown(client);
        clients.clear();
    }

    @Override
    public Map<String, Object> acquire(JsonNode request) {
        String name = request.get("lock").asText();
        List<TappedLock> nodes = new ArrayList<>();
        for (RedissonClient client : clients) nodes.add(new TappedLock(client, name));
        RLock[] array = nodes.toArray(new RLock[0]);
        RedissonMultiLock lock = redlock ? new RedissonRedLock(array) : new RedissonMultiLock(array);
        long threadId = RedissonSupport.newHolderId();
        // Each node's holder field: that node's client id and the thread id.
        Map<Integer, String> fields = new java.util.HashMap<>();
        for (int node = 0; node < clients.size(); node++) fields.put(node, RedissonSupport.owner(clients.get(node), threadId));
        boolean acquired;
        Long attemptNs;
        // The grant is when enough nodes were locked in the attempt that won:
        // attempt_ns is the send of that attempt's first lock command, no later
        // than any command of it (RedissonWire.Attempts.firstOfLastAttemptNs).
        try (RedissonWire.Attempts attempts = new RedissonWire.Attempts(wires, name, fields)) {
            acquired = lock.tryLockAsync(request.get("wait_ms").asLong(), request.get("ttl_ms").asLong(),
                    TimeUnit.MILLISECONDS, threadId).get();
            attemptNs = acquired ? attempts.firstOfLastAttemptNs() : null;
        } catch (Exception e) {
            return RedissonSupport.outcome(e);
        }
        if (!acquired) {
            for (TappedLock node : nodes)
                if (node.error != null)
                    return Protocol.unknown("not acquired, but a node's command failed and may have left a key: "
                            + Protocol.describe(RedissonSupport.unwrap(node.error)));
            return Protocol.fail("held by another client");
        }
        // Every client's id names the same holder on its node; the first one is the owner.
        String owner = RedissonSupport.owner(clients.get(0), threadId);
        holders.put(owner, new Holder(nodes, threadId));
        return RedissonSupport.acquired(owner, attemptNs);
    }

    /**
     * What unlock() does (RedissonMultiLock: each node's unlock in turn,
     * throwing at the first that fails; RedissonRedLock: each node's unlock,
     * errors skipped), with every node's outcome kept: released where any
     * node released it, unknown where a node's unlock may have run
     * (timeout), not held where no node held it.
     */
    @Override
    public Map<String, Object> release(JsonNode request) {
        Holder holder = holders.remove(request.get("owner").asText());
        if (holder == null) return RedissonSupport.notAnAcquisition();
        List<RFuture<Void>> unlocks = new ArrayList<>();
        for (RLock node : holder.nodes()) unlocks.add(node.unlockAsync(holder.threadId()));
        int released = 0;
        Map<String, Object> uncertain = null;
        String notHeld = null;
        for (RFuture<Void> unlock : unlocks) {
            try {
                unlock.toCompletableFuture().get();
                released++;
            } catch (Exception e) {
                Map<String, Object> outcome = RedissonSupport.outcome(e);
                if (Boolean.TRUE.equals(outcome.get("unknown"))) uncertain = outcome;
                else notHeld = (String) outcome.get("error");
            }
        }
        if (uncertain != null) return uncertain;
        if (released > 0) {
            Map<String, Object> response = Protocol.ok();
            return response;
        }
        return Protocol.fail(notHeld == null ? "not held" : notHeld);
    }

    @Override
    public Map<String, Object> extend(JsonNode request) {
        return Protocol.fail("unsupported: the multi-lock has no extend");
    }
}
