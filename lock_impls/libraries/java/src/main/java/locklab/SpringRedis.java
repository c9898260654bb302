package locklab;

import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/** What the adapters of libraries built on Spring Data Redis (ShedLock, Spring Integration) share. */
final class SpringRedis {

    private SpringRedis() {}

    /**
     * The scripts a library runs through a connection of `factory`, watched:
     * a factory whose connections pass every other call through unchanged,
     * and, on a thread that asked (watch), note when each EVALSHA or EVAL
     * (Spring Data Redis' DefaultScriptExecutor: RedisConnection.evalSha,
     * and eval after NOSCRIPT) on the watched key was sent and whether it
     * answered true. The call is synchronous (Jedis): the time read before it
     * is no later than the command's send.
     */
    static RedisConnectionFactory watchingScripts(RedisConnectionFactory factory) {
        return (RedisConnectionFactory) Proxy.newProxyInstance(SpringRedis.class.getClassLoader(),
                new Class<?>[] {RedisConnectionFactory.class}, (proxy, method, args) -> {
                    Object result = call(factory, method, args);
                    if (method.getName().equals("getConnection") && result instanceof RedisConnection connection)
                        return watched(connection);
                    return result;
                });
    }

    /** What one thread's watch saw: the send time of the first script on its key that answered true. */
    static final class ScriptWatch {
        private final byte[] key;
        private Long trueSentNs;

        private ScriptWatch(String key) {
            this.key = key.getBytes(StandardCharsets.UTF_8);
        }

        Long trueSentNs() {
            return trueSentNs;
        }
    }

    private static final ThreadLocal<ScriptWatch> WATCH = new ThreadLocal<>();

    /** Watches the scripts this thread runs on `key` until unwatch(). */
    static ScriptWatch watch(String key) {
        ScriptWatch watch = new ScriptWatch(key);
        WATCH.set(watch);
        return watch;
    }

    static void unwatch() {
        WATCH.remove();
    }

    private static RedisConnection watched(RedisConnection connection) {
        return (RedisConnection) Proxy.newProxyInstance(SpringRedis.class.getClassLoader(),
                new Class<?>[] {RedisConnection.class}, (proxy, method, args) -> {
                    ScriptWatch watch = WATCH.get();
                    String name = method.getName();
                    // eval/evalSha(script, ReturnType, numKeys, byte[]... keysAndArgs)
                    if (watch == null || !(name.equals("eval") || name.equals("evalSha")) || args == null || args.length != 4
                            || !(args[3] instanceof byte[][] keysAndArgs) || keysAndArgs.length == 0
                            || !Arrays.equals(keysAndArgs[0], watch.key))
                        return call(connection, method, args);
                    long sent = System.nanoTime();
                    Object result = call(connection, method, args);
                    if (Boolean.TRUE.equals(result) && watch.trueSentNs == null) watch.trueSentNs = sent;
                    return result;
                });
    }

    /** The target's method, its own exception rethrown (Spring's translated DataAccessException). */
    private static Object call(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /**
     * A started Jedis pool on `endpoint` with a 0.5 s connect and 1 s read
     * timeout (no retries), the lab's credentials if any, warmed up by a PING.
     */
    static JedisConnectionFactory connectionFactory(Protocol.Endpoint endpoint) {
        RedisStandaloneConfiguration server = new RedisStandaloneConfiguration(endpoint.host(), endpoint.port());
        if (Protocol.username() != null) server.setUsername(Protocol.username());
        if (Protocol.password() != null) server.setPassword(RedisPassword.of(Protocol.password()));
        JedisClientConfiguration client = JedisClientConfiguration.builder()
                .connectTimeout(Duration.ofMillis(500))
                .readTimeout(Duration.ofMillis(1000))
                .usePooling()
                .build();
        JedisConnectionFactory factory = new JedisConnectionFactory(server, client);
        factory.afterPropertiesSet();
        factory.start();
        try (var connection = factory.getConnection()) {
            connection.ping();
        }
        return factory;
    }
}
