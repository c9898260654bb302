package locklab;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The locklab adapter protocol (harness/adapter/PROTOCOL.md) for the Java
 * adapters: the --redis argument, the JSON-lines loop (one request per line
 * on stdin, one response per line on stdout with the request's id, flushed),
 * the connect op, incidents, renewals (reported by an adapter whose library
 * renews in the background), hello's monotonic_ns, and a deadline under the
 * lab's reply timeout.
 * Each adapter class only maps hello / connect / acquire / release / extend /
 * held to its library:
 *
 * <pre>
 *   public static void main(String[] args) {
 *       Protocol.serve(args, endpoints -> new MyAdapter(endpoints));
 *   }
 * </pre>
 *
 * stdout is kept for responses: System.out is pointed at stderr, where the
 * libraries' logging (slf4j-simple) goes too.
 */
public final class Protocol {

    /** One Redis endpoint of --redis: a fault proxy of the lab. */
    public record Endpoint(String host, int port) {
        public String uri() { return "redis://" + host + ":" + port; }
    }

    /** What an adapter implements; a response is a map without "id". */
    public interface Adapter {
        Map<String, Object> hello();
        /** Builds the client and opens its connections (the connect op, or lazily before the first acquire). */
        void connect() throws Exception;
        /** The lease the story will ask for, told by the connect op before the story's clock starts: build what that lease needs now. */
        default void prepare(long ttlMs) throws Exception {}
        /**
         * Called by the connect op after connect() and prepare(), before the
         * story's clock starts: loads and compiles the library's lock path
         * (lockOnce), so that the story's first acquire meets the library
         * warm, as in an application that has run a while. Must leave no
         * key behind. A script it sends stays in Redis's cache, where the
         * story's first EVALSHA finds it instead of meeting NOSCRIPT, a round
         * trip that delay stories measure: flush it (ShedLockRedis) unless
         * the library's own warm-up is meant to keep it. The default does
         * nothing: the story meets the library cold.
         */
        default void warmUp(long ttlMs) throws Exception {}
        Map<String, Object> acquire(JsonNode request) throws Exception;
        Map<String, Object> release(JsonNode request) throws Exception;
        default Map<String, Object> extend(JsonNode request) throws Exception {
            return fail("unsupported: the library has no extend");
        }
        default Map<String, Object> held(JsonNode request) throws Exception {
            return fail("unsupported: the library does not say whether a lease is held");
        }
        /**
         * The reset op (PROTOCOL.md, "Kept between runs"): closes every
         * client of the library and returns only once its threads, timers
         * and connections are gone, without releasing anything. The
         * process then serves the next run with an adapter of its own.
         */
        void close() throws Exception;
    }

    public interface Factory {
        Adapter create(List<Endpoint> endpoints) throws Exception;
    }

    /** A request the library has not answered after this long (+ wait_ms) gets unknown, under the lab's 10 s. */
    static final long DEADLINE_MS = 8000;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final PrintStream OUT = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    private static final List<Map<String, Object>> incidents = new ArrayList<>();
    private static final List<Map<String, Object>> renewals = new ArrayList<>();
    private static volatile long helloAnsweredNs = System.nanoTime();

    private Protocol() {}

    public static Map<String, Object> ok() {
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("ok", true);
        return response;
    }

    /** Definitely not: nothing of the request is left in Redis. */
    public static Map<String, Object> fail(String error) {
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("ok", false);
        response.put("error", error);
        return response;
    }

    /** It may or may not have happened (a timeout, a connection lost after sending). */
    public static Map<String, Object> unknown(String error) {
        Map<String, Object> response = fail(error);
        response.put("unknown", true);
        return response;
    }

    /** One line: the exception's class and message, and its causes'. */
    public static String describe(Throwable error) {
        StringBuilder text = new StringBuilder();
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (text.length() > 0) text.append(" <- ");
            text.append(e.getClass().getSimpleName());
            if (e.getMessage() != null) text.append(": ").append(e.getMessage().split("\n")[0]);
        }
        return text.length() > 300 ? text.substring(0, 300) : text.toString();
    }

    /** "artifact version" from the jar that holds cls (its Maven pom.properties, else its manifest). */
    public static String versionOf(Class<?> cls, String group, String artifact) {
        String path = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream in = cls.getResourceAsStream(path)) {
            if (in != null) {
                Properties properties = new Properties();
                properties.load(in);
                return artifact + " " + properties.getProperty("version");
            }
        } catch (Exception ignored) {
            // fall through to the manifest
        }
        String version = cls.getPackage().getImplementationVersion();
        return artifact + " " + (version == null ? "unknown" : version);
    }

    /** The hello answer's common fields. */
    public static Map<String, Object> hello(String name, String version) {
        Map<String, Object> response = ok();
        response.put("name", name);
        response.put("version", version);
        response.put("reentrant", false);
        response.put("fencing", false);
        response.put("connect", true);
        response.put("incidents", true);
        response.put("reusable", true);
        return response;
    }

    /** Records what an application on the JVM's defaults would have seen crash a thread. */
    static void incident(String kind, Throwable error) {
        long atMs = (System.nanoTime() - helloAnsweredNs) / 1_000_000;
        String message = describe(error);
        System.err.println("incident " + kind + " at " + atMs + " ms: " + message);
        error.printStackTrace(System.err);
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("kind", kind);
        entry.put("message", message);
        entry.put("at_ms", atMs);
        synchronized (incidents) {
            incidents.add(entry);
        }
    }

    /**
     * Reports one background renewal of `owner`'s lease on `lock` (the lab's
     * name) for `ttlMs` (PROTOCOL.md, "Renewals"): sent and answered at
     * System.nanoTime() readings, which on Linux are CLOCK_MONOTONIC, the
     * lab's clock; ok = renewed, unknown = its answer was lost (neither:
     * refused). From any thread, in the order the answers came; attached to
     * the next response of any kind.
     */
    public static void renewed(String lock, String owner, long ttlMs, long sentNs, long answeredNs, boolean ok, boolean unknown) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("lock", lock);
        entry.put("owner", owner);
        entry.put("ttl_ms", ttlMs);
        entry.put("sent_ns", sentNs);
        entry.put("answered_ns", answeredNs);
        entry.put("ok", ok);
        if (unknown && !ok) entry.put("unknown", true);
        synchronized (renewals) {
            renewals.add(entry);
        }
    }

    /** The lock a warm-up takes and releases (Adapter.warmUp). */
    static final String WARM_UP_LOCK = "locklab-warm-up";

    /**
     * Takes WARM_UP_LOCK through `adapter` with a lease of ttlMs and releases
     * it. Cold, a ShedLock adapter's first acquire took 1.3 s beside other
     * tests, where its story gives c1 one second to spare. A warm-up that
     * fails is only logged: the story then meets the library cold.
     */
    static void lockOnce(Adapter adapter, long ttlMs) {
        ObjectNode acquire = JSON.createObjectNode();
        acquire.put("lock", WARM_UP_LOCK);
        acquire.put("ttl_ms", ttlMs);
        acquire.put("wait_ms", 0);
        try {
            Map<String, Object> taken = adapter.acquire(acquire);
            if (taken.get("ok") == Boolean.TRUE) {
                ObjectNode release = JSON.createObjectNode();
                release.put("lock", WARM_UP_LOCK);
                release.put("owner", String.valueOf(taken.get("owner")));
                adapter.release(release);
            } else {
                System.err.println("connect: the warm-up lock was not taken: " + taken);
            }
        } catch (Exception e) {
            System.err.println("connect: warm-up: " + describe(e));
        }
    }

    private static List<Map<String, Object>> takeRenewals() {
        synchronized (renewals) {
            List<Map<String, Object>> taken = new ArrayList<>(renewals);
            renewals.clear();
            return taken;
        }
    }

    private static List<Map<String, Object>> takeIncidents() {
        synchronized (incidents) {
            List<Map<String, Object>> taken = new ArrayList<>(incidents);
            incidents.clear();
            return taken;
        }
    }

    static List<Endpoint> endpoints(String[] args) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--redis")) return endpoints(args[i + 1]);
        }
        System.err.println("usage: ... --redis host:port[,host:port...]");
        System.exit(2);
        return null;
    }

    /** The endpoints of "host:port[,host:port...]", node 0 first. */
    static List<Endpoint> endpoints(String list) {
        List<Endpoint> endpoints = new ArrayList<>();
        for (String hostPort : list.split(",")) {
            int colon = hostPort.lastIndexOf(':');
            endpoints.add(new Endpoint(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1))));
        }
        return endpoints;
    }

    /** Requests run on worker threads, so that one the library never answers can be answered unknown at the deadline while the loop goes on. */
    private static ExecutorService newWorkers() {
        return Executors.newCachedThreadPool(runnable -> {
            Thread thread = new Thread(runnable, "adapter-request");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** The target's credentials, when the lab passes them (absent otherwise). */
    public static String username() { return emptyToNull(System.getenv("LOCKLAB_REDIS_USERNAME")); }
    public static String password() { return emptyToNull(System.getenv("LOCKLAB_REDIS_PASSWORD")); }

    private static String emptyToNull(String value) { return value == null || value.isEmpty() ? null : value; }

    private static void respond(long id, Map<String, Object> response) throws Exception {
        List<Map<String, Object>> pending = takeIncidents();
        if (!pending.isEmpty()) {
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> already = (List<Map<String, Object>>) response.get("incidents");
            if (already != null) pending.addAll(0, already);
            response.put("incidents", pending);
        }
        // Hello's "renewals" is the capability; it is answered before any renewal.
        if (!response.containsKey("name")) {
            List<Map<String, Object>> renewed = takeRenewals();
            if (!renewed.isEmpty() || response.get("renewals") instanceof List) response.put("renewals", renewed);
        }
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("id", id);
        line.putAll(response);
        synchronized (OUT) {
            OUT.print(JSON.writeValueAsString(line) + "\n");
            OUT.flush();
        }
    }

    /** Answers each request until stdin closes, then exits at once (no waiting for the libraries' threads). */
    public static void serve(String[] args, Factory factory) {
        System.setOut(System.err);
        Thread.setDefaultUncaughtExceptionHandler((thread, error) -> incident("uncaught-exception", error));
        List<Endpoint> endpoints = endpoints(args);
        ExecutorService workers = newWorkers();
        Adapter adapter = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) continue;
                JsonNode request = JSON.readTree(line);
                long id = request.get("id").asLong();
                String op = request.path("op").asText();
                if (op.equals("reset")) {
                    // The run is over: nothing of it may reach the next one.
                    Map<String, Object> response = ok();
                    if (adapter != null) {
                        final Adapter closing = adapter;
                        adapter = null;
                        Future<?> closed = workers.submit(() -> { closing.close(); return null; });
                        try {
                            closed.get(DEADLINE_MS, TimeUnit.MILLISECONDS);
                        } catch (Exception e) {
                            Throwable cause = e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
                            System.err.println("reset: " + describe(cause));
                            response = fail("could not close the library's clients: " + describe(cause));
                        }
                    }
                    workers.shutdownNow();
                    workers = newWorkers();
                    takeIncidents();
                    takeRenewals();
                    System.err.println("reset: the run is over" + (response.get("ok") == Boolean.TRUE ? "" : ", not cleanly"));
                    respond(id, response);
                    continue;
                }
                if (op.equals("hello") && request.hasNonNull("redis")) {
                    endpoints = endpoints(request.get("redis").asText());
                    System.err.println("hello: a new run on " + request.get("redis").asText());
                }
                if (adapter == null) adapter = factory.create(endpoints);
                if (op.equals("hello")) {
                    Map<String, Object> response = adapter.hello();
                    helloAnsweredNs = System.nanoTime();
                    // This machine's CLOCK_MONOTONIC (HotSpot's System.nanoTime on
                    // Linux), read while answering: the clock of attempt_ns and of
                    // renewals' times (PROTOCOL.md, "Renewals").
                    response.put("monotonic_ns", helloAnsweredNs);
                    respond(id, response);
                    continue;
                }
                if (op.equals("incidents")) {
                    Map<String, Object> response = ok();
                    response.put("incidents", takeIncidents());
                    respond(id, response);
                    continue;
                }
                if (op.equals("renewals")) {
                    // respond() puts whatever is left in the list, there even when empty.
                    Map<String, Object> response = ok();
                    response.put("renewals", List.of());
                    respond(id, response);
                    continue;
                }
                final Adapter a = adapter;
                Future<Map<String, Object>> answer = workers.submit(() -> {
                    if (op.equals("connect") || op.equals("acquire")) {
                        // connect is idempotent: done once, by the connect op or
                        // before the first acquire when the lab sends none.
                        try {
                            a.connect();
                            if (op.equals("connect") && request.hasNonNull("ttl_ms")) a.prepare(request.get("ttl_ms").asLong());
                        } catch (Exception e) {
                            System.err.println("connect: " + describe(e));
                            return fail("cannot connect: " + describe(e));
                        }
                        if (op.equals("connect")) {
                            a.warmUp(request.path("ttl_ms").asLong(1000));
                            // The warm-up's, not the story's.
                            takeRenewals();
                            takeIncidents();
                            return ok();
                        }
                    }
                    return switch (op) {
                        case "acquire" -> a.acquire(request);
                        case "release" -> a.release(request);
                        case "extend" -> a.extend(request);
                        case "held" -> a.held(request);
                        default -> fail("unknown op " + op);
                    };
                });
                long deadline = DEADLINE_MS + Math.max(0, request.path("wait_ms").asLong(0));
                Map<String, Object> response;
                try {
                    response = answer.get(deadline, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    System.err.println("request " + id + " (" + op + ") unanswered after " + deadline + " ms");
                    response = op.equals("held") ? fail("no answer after " + deadline + " ms")
                            : unknown("no answer from the library after " + deadline + " ms");
                } catch (java.util.concurrent.ExecutionException e) {
                    // An exception the adapter did not map: it may have sent something.
                    System.err.println("request " + id + " (" + op + ") failed: " + describe(e.getCause()));
                    e.getCause().printStackTrace(System.err);
                    response = op.equals("held") ? fail(describe(e.getCause())) : unknown(describe(e.getCause()));
                }
                respond(id, response);
            }
        } catch (Exception e) {
            System.err.println("adapter: " + describe(e));
            e.printStackTrace(System.err);
            Runtime.getRuntime().halt(1);
        }
        Runtime.getRuntime().halt(0);
    }
}
