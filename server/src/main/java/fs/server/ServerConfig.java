package fs.server;

import java.time.Duration;
import java.util.List;

/**
 * How fs serve listens and guards itself.
 *
 * @param host         the address to listen on
 * @param port         the port; 0 picks a free one
 * @param apiKey       the key every request but /health must carry as {@code Authorization: Bearer KEY}; null: none
 * @param allowedHosts Host header names served besides loopback names, IP literals and {@code host}; {@code "*"}:
 *                     any (the defense against DNS rebinding off)
 * @param corsOrigins  the browser origins that may call the API cross-site ({@code "*"}: any); empty: none, and no
 *                     CORS header is ever sent
 * @param timeouts     how long a client may take
 * @param jsonLog      whether the access log is one JSON object per line (else fs's plain line)
 */
public record ServerConfig(String host, int port, String apiKey, List<String> allowedHosts, List<String> corsOrigins,
                           Timeouts timeouts, boolean jsonLog) {
    public ServerConfig {
        allowedHosts = List.copyOf(allowedHosts);
        corsOrigins = List.copyOf(corsOrigins);
    }

    /** Listening on {@code host:port} with every guard at its default. */
    public static ServerConfig defaults(String host, int port, String apiKey) {
        return new ServerConfig(host, port, apiKey, List.of(), List.of(), Timeouts.DEFAULTS, false);
    }

    /**
     * How long a client may take, as nginx bounds it.
     *
     * @param header a request's headers, from its first byte to the blank line (nginx's client_header_timeout)
     * @param body   between two reads of a request body (client_body_timeout)
     * @param send   between two writes of a response a client does not read (send_timeout): a stalled stream reader
     *               loses its slot after this long
     * @param idle   a kept-alive connection between requests (keepalive_timeout)
     */
    public record Timeouts(Duration header, Duration body, Duration send, Duration idle) {
        /** nginx's defaults: 60 s, 60 s, 60 s and 75 s. */
        public static final Timeouts DEFAULTS = new Timeouts(Duration.ofSeconds(60), Duration.ofSeconds(60),
                Duration.ofSeconds(60), Duration.ofSeconds(75));

        public Timeouts {
            for (Duration timeout : List.of(header, body, send, idle)) {
                if (timeout.isNegative() || timeout.isZero()) {
                    throw new IllegalArgumentException("a timeout must be positive, got " + timeout);
                }
            }
        }
    }
}
