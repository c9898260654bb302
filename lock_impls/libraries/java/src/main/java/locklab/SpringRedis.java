package locklab;

import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import java.time.Duration;

/** What the adapters of libraries built on Spring Data Redis (ShedLock, Spring Integration) share. */
final class SpringRedis {

    private SpringRedis() {}

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
