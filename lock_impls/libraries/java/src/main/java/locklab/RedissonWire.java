package locklab;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import org.redisson.client.NettyHook;
import org.redisson.client.protocol.CommandData;
import org.redisson.client.protocol.CommandsData;
import org.redisson.client.protocol.decoder.ContainsDecoder;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * What one Redisson client writes to Redis, seen on the wire: a Netty hook
 * (Config.setNettyHook) puts a handler at the tail of each of the client's
 * channels, where every command Redisson sends enters the pipeline
 * (RedisConnection.send is channel.writeAndFlush, and CommandsQueue writes
 * it on at once), before it is encoded and written to the socket. Each EVAL
 * or EVALSHA is handed to the watchers with the time it entered (so no later
 * than it was sent) and its reply promise (CommandData.getPromise, completed
 * by CommandDecoder when the answer is read, or by the response timeout).
 *
 * Two uses: the watchdog's renewals (every one of them, RedissonWatchdogLock)
 * and the lock command that won an acquire (Attempts), both told by what
 * Redisson actually sent rather than by what its API returns.
 */
final class RedissonWire implements NettyHook {

    /**
     * One script command as it entered the channel: KEYS and ARGV as text, and
     * whether it is the watchdog's renewal (LockTask.buildChunk: an EVAL whose
     * reply goes through ContainsDecoder, the keys it renewed; EVALSHA copies
     * the decoder).
     */
    record Script(int node, boolean renewal, List<String> keys, List<String> args, long sentNs,
                  CompletableFuture<?> reply) {}

    /** The endpoint's index in --redis (the multi-node locks: one client per node). */
    final int node;
    private final List<Consumer<Script>> watchers = new CopyOnWriteArrayList<>();
    /** Commands already handed over (by identity: CommandData has no equals), should one pass twice. */
    private final Set<Object> seen = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    RedissonWire(int node) {
        this.node = node;
    }

    void watch(Consumer<Script> watcher) {
        watchers.add(watcher);
    }

    void unwatch(Consumer<Script> watcher) {
        watchers.remove(watcher);
    }

    @Override
    public void afterBoostrapInitialization(Bootstrap bootstrap) {
    }

    /** Called by RedisChannelInitializer.initChannel after Redisson's own handlers: addLast is the tail. */
    @Override
    public void afterChannelInitialization(Channel channel) {
        channel.pipeline().addLast("locklab-wire", new ChannelOutboundHandlerAdapter() {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
                if (msg instanceof CommandData<?, ?> command) see(command);
                else if (msg instanceof CommandsData batch) for (CommandData<?, ?> command : batch.getCommands()) see(command);
                super.write(ctx, msg, promise);
            }
        });
    }

    private void see(CommandData<?, ?> command) {
        if (watchers.isEmpty()) return;
        long now = System.nanoTime();
        String name = command.getCommand().getName();
        if (!name.startsWith("EVAL")) return;  // EVAL, EVALSHA (Redisson's script cache), their _RO forms
        if (!seen.add(command)) return;
        // EVAL script|sha numkeys key... arg... (CommandAsyncService.evalAsync: keys as
        // given, args encoded by the codec into ByteBufs, not yet read by the encoder).
        Object[] params = command.getParams();
        int count;
        try {
            count = Integer.parseInt(text(params[1]));
        } catch (RuntimeException e) {
            return;
        }
        List<String> keys = new ArrayList<>();
        List<String> args = new ArrayList<>();
        for (int i = 2; i < params.length; i++) (i < 2 + count ? keys : args).add(text(params[i]));
        boolean renewal = command.getCommand().getReplayMultiDecoder() instanceof ContainsDecoder;
        Script script = new Script(node, renewal, keys, args, now, command.getPromise());
        for (Consumer<Script> watcher : watchers) watcher.accept(script);
    }

    /** A parameter as text, without moving a ByteBuf's reader index (the encoder reads it next). */
    static String text(Object param) {
        if (param instanceof String s) return s;
        if (param instanceof byte[] bytes) return new String(bytes, StandardCharsets.UTF_8);
        if (param instanceof ByteBuf buf) return buf.toString(buf.readerIndex(), buf.readableBytes(), StandardCharsets.UTF_8);
        return String.valueOf(param);
    }

    /**
     * The lock commands of one acquisition, as sent: the RLock acquire script
     * (RedissonLock.tryLockInnerAsync) and RFencedLock's
     * (RedissonFencedLock.tryLockInnerAsync) both take KEYS[1] = the lock's
     * name and ARGV = {leaseTime, holder field}; the holder field
     * ("<client id>:<thread id>", new per acquisition) names this acquisition
     * alone, and in ARGV[2] it is a lock command (the unlock script has it in
     * ARGV[3]; the watchdog's renewal, the same shape, is told by its decoder
     * and renews only a lock already taken). Registered on the wires before
     * tryLock, closed after it.
     */
    static final class Attempts implements Consumer<Script>, AutoCloseable {
        private final List<RedissonWire> wires;
        private final String lock;
        private final Map<Integer, String> fieldByNode;
        private final List<Script> sent = new ArrayList<>();

        Attempts(List<RedissonWire> wires, String lock, Map<Integer, String> fieldByNode) {
            this.wires = wires;
            this.lock = lock;
            this.fieldByNode = fieldByNode;
            for (RedissonWire wire : wires) wire.watch(this);
        }

        @Override
        public void accept(Script script) {
            if (script.renewal() || script.keys().isEmpty() || !script.keys().get(0).equals(lock)) return;
            if (script.args().size() != 2 || !script.args().get(1).equals(fieldByNode.get(script.node()))) return;
            synchronized (sent) {
                sent.add(script);
            }
        }

        @Override
        public void close() {
            for (RedissonWire wire : wires) wire.unwatch(this);
        }

        private List<Script> inOrder() {
            synchronized (sent) {
                List<Script> copy = new ArrayList<>(sent);
                copy.sort(Comparator.comparingLong(Script::sentNs));
                return copy;
            }
        }

        /**
         * One node: the send time of the lock command whose own answer says it
         * took the lock (the earliest, should there be two), or null. The
         * answers, as CommandDecoder completes the promise: the RLock script
         * returns nil when it took the lock and the holder's PTTL otherwise
         * (EVAL_LONG: null / a number; EVAL_NULL_BOOLEAN: true / false), the
         * RFencedLock script {-1, token} / {pttl, -1} (EVAL_LONG_LIST). A
         * command whose answer is an error (NOSCRIPT before the EVAL that
         * follows it, a timeout) took nothing here: tryLock fails when its
         * last command times out (no retries), and answers true only after
         * an answer that took the lock.
         */
        Long winningSentNs() {
            return firstTookLock(inOrder(), Long.MIN_VALUE);
        }

        /** The send time of the first command sent at or after `from` whose answer took the lock (on its node), or null. */
        private static Long firstTookLock(List<Script> order, long from) {
            for (Script script : order) {
                if (script.sentNs() < from) continue;
                CompletableFuture<?> reply = script.reply();
                if (!reply.isDone() || reply.isCompletedExceptionally() || reply.isCancelled()) continue;
                if (tookLock(reply.getNow(null))) return script.sentNs();
            }
            return null;
        }

        private static boolean tookLock(Object answer) {
            if (answer == null) return true;
            if (answer instanceof Boolean b) return b;
            if (answer instanceof List<?> list) return !list.isEmpty() && Long.valueOf(-1).equals(list.get(0));
            return false;
        }

        /**
         * Several nodes (RedissonMultiLock.LockState.tryAcquireLockAsync): an
         * attempt locks the nodes one after another in --redis order, each
         * node's tryLock waiting and retrying on that node alone, and a
         * failed attempt starts again from the first node; the last attempt
         * is the one that won. It began no earlier than the first of the last
         * run of commands to the first node (a run that starts earlier when
         * an attempt failed at the first node itself; if the last attempt
         * sent the first node nothing, its connection not made, the run is
         * an earlier attempt's: earlier is safe). The lock was granted when
         * the last node it needed was locked, so no earlier than the first
         * command of that attempt that locked a node: the first command from
         * the run's start whose answer took its node (one of an earlier
         * attempt's at worst, which is earlier still), else the run's start.
         * Not the first command of the attempt itself: a node's own tryLock
         * waits there, up to wait_ms / N (RedLock) or wait_ms (MultiLock), and
         * its commands that found the node held took nothing. Null when
         * nothing was sent.
         */
        Long firstOfLastAttemptNs() {
            List<Script> order = inOrder();
            if (order.isEmpty()) return null;
            int last = -1;
            for (int i = 0; i < order.size(); i++) if (order.get(i).node() == 0) last = i;
            int first = 0;
            if (last >= 0) {
                first = last;
                while (first > 0 && order.get(first - 1).node() == 0) first--;
            }
            long start = order.get(first).sentNs();
            Long took = firstTookLock(order, start);
            return took != null ? took : start;
        }
    }
}
