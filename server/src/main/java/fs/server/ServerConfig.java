package fs.server;

import java.time.Duration;
import java.util.List;

/**
 * How fs serve listens and guards itself.
 *
 * @param host         the address to listen on
 * @param port         the port; 0 picks a free one
 * @param apiKey       the key every request but /health must carry as {@code Authorization: Bearer KEY} (or
 *                     {@code x-api-key: KEY}); null: none
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
     * @param idle     a kept-alive connection between requests (keepalive_timeout)
     * @param bodyRate the floor on a body's data rate: {@code body} bounds each pause, this the whole body
     */
    public record Timeouts(Duration header, Duration body, Duration send, Duration idle, BodyRate bodyRate) {
        /** nginx's defaults: 60 s, 60 s, 60 s and 75 s; Apache's body rate. */
        public static final Timeouts DEFAULTS = new Timeouts(Duration.ofSeconds(60), Duration.ofSeconds(60),
                Duration.ofSeconds(60), Duration.ofSeconds(75));

        public Timeouts {
            for (Duration timeout : List.of(header, body, send, idle)) {
                if (timeout.isNegative() || timeout.isZero()) {
                    throw new IllegalArgumentException("a timeout must be positive, got " + timeout);
                }
            }
            java.util.Objects.requireNonNull(bodyRate, "bodyRate");
        }

        /** With the default body rate. */
        public Timeouts(Duration header, Duration body, Duration send, Duration idle) {
            this(header, body, send, idle, BodyRate.DEFAULT);
        }
    }

    /**
     * How fast a request body must arrive, as Apache's mod_reqtimeout bounds it ({@code body=20,MinRate=500}): within
     * {@code grace}, plus a second for every {@code bytesPerSecond} bytes received. A body that trickles in, a byte
     * each pause shorter than the body timeout, is cut (408) once it falls behind, instead of holding its connection
     * for as long as it likes.
     *
     * @param grace          how long any body may take
     * @param bytesPerSecond the rate a body must keep up, on average, once it takes longer than {@code grace}
     */
    public record BodyRate(Duration grace, int bytesPerSecond) {
        /** Apache's: 20 s, then 500 bytes a second. */
        public static final BodyRate DEFAULT = new BodyRate(Duration.ofSeconds(20), 500);

        public BodyRate {
            if (grace.isNegative() || grace.isZero()) throw new IllegalArgumentException("grace must be positive");
            if (bytesPerSecond < 1) throw new IllegalArgumentException("bytesPerSecond must be ≥ 1");
        }

        /** When a body that began at {@code startNanos} and has {@code received} bytes so far must have more. */
        long deadlineNanos(long startNanos, long received) {
            return startNanos + grace.toNanos() + received * 1_000_000_000L / bytesPerSecond;
        }
    }
}
