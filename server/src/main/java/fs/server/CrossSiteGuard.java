package fs.server;

import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The defense against web pages that call the local server from the user's browser. A page may send a "simple"
 * request (a POST of text/plain, no preflight) to any address, and with DNS rebinding may even read the answers under
 * its own host name. So: completion bodies must be application/json (which no simple request can be, the server
 * checks it), the Host header must name this server (a loopback name, an IP literal, the --host address or one of
 * --allowed-hosts: a rebound name is none of these), and no CORS header is sent unless --cors names the origin.
 */
final class CrossSiteGuard {
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    private final String host;
    private final List<String> allowedHosts;
    private final List<String> corsOrigins;

    CrossSiteGuard(String host, List<String> allowedHosts, List<String> corsOrigins) {
        this.host = normalize(host);
        this.allowedHosts = allowedHosts.stream().map(CrossSiteGuard::normalize).toList();
        this.corsOrigins = List.copyOf(corsOrigins);
    }

    /**
     * Whether a request with this Host header (null: none, as HTTP/1.0 allows, and which no browser sends) may be
     * served. An IP literal is allowed: DNS rebinding needs a name, and a client that reaches the server by its
     * address (--host 0.0.0.0) names it so.
     */
    boolean hostAllowed(String hostHeader) {
        if (hostHeader == null || allowedHosts.contains("*")) return true;
        String name = normalize(withoutPort(hostHeader.strip()));
        if (name.isEmpty()) return false;
        return name.equals("localhost") || name.endsWith(".localhost") || name.startsWith("[")
                || IPV4.matcher(name).matches() || name.equals(host) || allowedHosts.contains(name);
    }

    /** The value of Access-Control-Allow-Origin for a request from {@code origin}, or null: send none. */
    String allowedOrigin(String origin) {
        if (origin == null) return null;
        if (corsOrigins.contains("*")) return "*";
        return corsOrigins.contains(origin) ? origin : null;
    }

    private static String withoutPort(String authority) {
        if (authority.startsWith("[")) {
            int end = authority.indexOf(']');
            return end < 0 ? authority : authority.substring(0, end + 1);
        }
        int colon = authority.lastIndexOf(':');
        return colon < 0 ? authority : authority.substring(0, colon);
    }

    private static String normalize(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return lower.endsWith(".") ? lower.substring(0, lower.length() - 1) : lower;
    }
}
