package fs.server;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import fs.FsException;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * An OpenAI-compatible HTTP server on the JDK's own {@code com.sun.net.httpserver}, each exchange on its own virtual
 * thread: {@code POST /v1/chat/completions}, {@code POST /v1/completions}, {@code GET /v1/models},
 * {@code GET /health} and {@code GET /metrics}. It listens before the model is loaded (health says 503 until
 * {@link #ready}), answers every bad request with OpenAI's error object, and logs one line per request.
 */
public final class OpenAiServer {
    /** The largest request body read; a larger one is refused with 413 before it is read. */
    public static final int MAX_BODY_BYTES = 4 << 20;

    private final HttpServer http;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final byte[] apiKey; // null: no key needed
    private final PrintWriter log;
    private final ServerMetrics metrics = new ServerMetrics();
    private final CompletionHandler completions = new CompletionHandler(metrics);
    private volatile ServedModel model; // null while loading
    private volatile boolean shuttingDown;

    private OpenAiServer(HttpServer http, String apiKey, PrintWriter log) {
        this.http = http;
        this.apiKey = apiKey == null ? null : apiKey.getBytes(StandardCharsets.UTF_8);
        this.log = log;
    }

    /**
     * Listens on {@code host:port} (port 0: any free port) and starts answering; with an {@code apiKey}, every request
     * but /health must carry {@code Authorization: Bearer KEY}. Each request is logged as one line on {@code log}.
     */
    public static OpenAiServer start(String host, int port, String apiKey, PrintWriter log) {
        HttpServer http;
        try {
            http = HttpServer.create(new InetSocketAddress(host, port), 0);
        } catch (BindException e) {
            throw new FsException("cannot listen on " + host + ":" + port + ": " + e.getMessage());
        } catch (IOException | IllegalArgumentException e) {
            throw new FsException("cannot listen on " + host + ":" + port + ": " + e.getMessage());
        }
        OpenAiServer server = new OpenAiServer(http, apiKey, log);
        http.createContext("/", server::dispatch);
        http.setExecutor(server.executor);
        http.start();
        return server;
    }

    /** The address it listens on (with the port chosen when 0 was asked for). */
    public InetSocketAddress address() {
        return http.getAddress();
    }

    /** The model is loaded: from now on requests are answered with it. Its engine is the server's to close. */
    public void ready(ServedModel model) {
        this.model = model;
    }

    /**
     * Stops: the listening socket closes at once, new requests on open connections get 503, running and queued
     * requests get {@code grace} to finish, and then the engine cuts the rest (a cut stream ends with an error event);
     * returns when every exchange is over and the engine is closed. Later calls do nothing.
     */
    public synchronized void shutdown(Duration grace) {
        if (shuttingDown) return;
        shuttingDown = true;
        Thread stopper = Thread.ofPlatform().name("fs-http-stop").start(() -> http.stop((int) grace.toSeconds() + 2));
        ServedModel served = model;
        if (served != null) {
            long deadline = System.nanoTime() + grace.toNanos();
            while (System.nanoTime() < deadline && isBusy(served.engine().load())) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            served.engine().close();
        }
        try {
            stopper.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        executor.close();
    }

    private static boolean isBusy(CompletionEngine.Load load) {
        return load.busy() > 0 || load.queued() > 0;
    }

    private void dispatch(HttpExchange exchange) {
        long start = System.nanoTime();
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getPath();
        String detail = "";
        try {
            if (!path.equals("/health") && !authorized(exchange)) {
                throw new ApiException(401, "invalid_request_error", "invalid_api_key", null,
                        "a valid API key is required: send the header 'Authorization: Bearer KEY' (fs serve --api-key)");
            }
            switch (path) {
                case "/health" -> {
                    expect(exchange, "GET");
                    health(exchange);
                }
                case "/metrics" -> {
                    expect(exchange, "GET");
                    ServedModel served = model;
                    CompletionEngine.Load load = served != null ? served.engine().load()
                            : new CompletionEngine.Load(0, 0, 0);
                    Exchanges.sendText(exchange, 200, "text/plain; version=0.0.4; charset=utf-8",
                            metrics.exposition(load));
                }
                case "/v1/models" -> {
                    expect(exchange, "GET");
                    Exchanges.sendJson(exchange, 200, models());
                }
                case "/v1/chat/completions", "/v1/completions" -> {
                    expect(exchange, "POST");
                    metrics.requestReceived();
                    CompletionHandler.Outcome outcome =
                            completions.handle(exchange, servedModel(), path.equals("/v1/chat/completions"));
                    detail = String.format(Locale.ROOT, ", %d prompt + %d generated tokens, %s",
                            outcome.promptTokens(), outcome.completionTokens(),
                            outcome.finishReason() != null ? outcome.finishReason() : "cut");
                }
                default -> throw new ApiException(404, "invalid_request_error", "not_found", null,
                        "no such endpoint: " + method + " " + path + " (POST /v1/chat/completions, POST "
                                + "/v1/completions, GET /v1/models, GET /health, GET /metrics)");
            }
        } catch (ApiException e) {
            detail = ": " + e.getMessage();
            respond(exchange, e);
        } catch (IOException e) {
            detail = ": the client went away (" + e.getMessage() + ")";
        } catch (RuntimeException | Error e) {
            // A bug, not a bad request: one line here (the stack trace with FS_DEBUG), a 500 there, and serve on.
            detail = ": internal error: " + e;
            if (System.getenv("FS_DEBUG") != null) e.printStackTrace(log);
            respond(exchange, new ApiException(500, "server_error", "internal_error", null, "internal error: "
                    + e.getClass().getSimpleName() + (e.getMessage() != null ? ": " + e.getMessage() : "")));
        } finally {
            exchange.close();
            int status = exchange.getResponseCode();
            log.printf(Locale.ROOT, "fs: %s %s %s (%.3f s)%s%n", method, path, status < 0 ? "-" : status,
                    (System.nanoTime() - start) / 1e9, detail);
            log.flush();
        }
    }

    /** Sends the error, unless a response was already started (then the client sees the stream end). */
    private static void respond(HttpExchange exchange, ApiException error) {
        if (exchange.getResponseCode() >= 0) return;
        try {
            Exchanges.sendError(exchange, error);
        } catch (IOException e) {
            // the client went away: nothing to tell it
        }
    }

    private boolean authorized(HttpExchange exchange) {
        if (apiKey == null) return true;
        String header = exchange.getRequestHeaders().getFirst("Authorization");
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) return false;
        // Constant time: how much of the key a guess got right must not show in the response time.
        return MessageDigest.isEqual(apiKey, header.substring(7).strip().getBytes(StandardCharsets.UTF_8));
    }

    private static void expect(HttpExchange exchange, String method) {
        if (!exchange.getRequestMethod().equals(method)) {
            exchange.getResponseHeaders().set("Allow", method);
            throw new ApiException(405, "invalid_request_error", "method_not_allowed", null,
                    exchange.getRequestURI().getPath() + " takes " + method + ", not " + exchange.getRequestMethod());
        }
    }

    private ServedModel servedModel() {
        if (shuttingDown) throw ApiException.unavailable("shutting_down", "the server is shutting down");
        ServedModel served = model;
        if (served == null) throw ApiException.unavailable("loading", "the model is loading; retry in a moment");
        return served;
    }

    private void health(HttpExchange exchange) throws IOException {
        ObjectNode body = JsonNodeFactory.instance.objectNode();
        if (shuttingDown) {
            body.put("status", "shutting down");
            Exchanges.sendJson(exchange, 503, body);
        } else if (model == null) {
            body.put("status", "loading model");
            exchange.getResponseHeaders().set("Retry-After", "1");
            Exchanges.sendJson(exchange, 503, body);
        } else {
            body.put("status", "ok");
            Exchanges.sendJson(exchange, 200, body);
        }
    }

    private ObjectNode models() {
        ObjectNode list = JsonNodeFactory.instance.objectNode();
        list.put("object", "list");
        var data = list.putArray("data");
        ServedModel served = model;
        if (served != null) {
            ObjectNode entry = data.addObject();
            entry.put("id", served.id());
            entry.put("object", "model");
            entry.put("created", served.createdSeconds());
            entry.put("owned_by", "fs");
        }
        return list;
    }
}
