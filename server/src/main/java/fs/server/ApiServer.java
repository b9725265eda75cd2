package fs.server;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

/**
 * fs serve's HTTP server on Jetty 12's core (no servlets), each request on its own virtual thread, speaking the APIs
 * clients already use over the one engine: OpenAI's ({@code POST /v1/chat/completions}, {@code /v1/completions},
 * {@code GET /v1/models}: {@link CompletionHandler}; {@code POST /v1/responses}: {@link ResponsesHandler}),
 * Anthropic's Messages ({@code POST /v1/messages}: {@link AnthropicMessages}), Ollama's ({@code /api/…}:
 * {@link OllamaHandler}), llama-server's utilities ({@link LlamaServerUtility}), {@code GET /health} and
 * {@code GET /metrics}; or, for a model served to embed or rerank ({@link ServedTask}), {@code POST /v1/embeddings}
 * or {@code POST /v1/rerank} in place of the completions. It listens before the model is loaded (health says 503
 * until {@link #ready}), answers every bad request, from a malformed request line to a wrong field, with the error
 * object of the route's API ({@link ErrorShape}), bounds how long a client may take ({@link ServerConfig.Timeouts})
 * and how large its headers may be, guards against cross-site requests ({@link CrossSiteGuard}), and logs one line per
 * request ({@link AccessLog}).
 */
public final class ApiServer {
    /** The largest request body read; a larger one is refused with 413 before it is read. */
    public static final int MAX_BODY_BYTES = 4 << 20;
    /** The largest request line plus headers (Jetty's and Tomcat's default); more is a 431 (a longer URI a 414). */
    public static final int MAX_HEADER_BYTES = 8 << 10;
    /** The most header fields a request may have (Apache's LimitRequestFields); more is a 431. */
    public static final int MAX_HEADERS = 100;

    private final Server jetty;
    private final ServerConnector connector;
    private final HeaderDeadline headerDeadline;
    private final ServerConfig config;
    private final byte[] apiKey; // null: no key needed
    private final AccessLog log;
    private final PrintWriter debugLog;
    private final CrossSiteGuard guard;
    private final ServerMetrics metrics = new ServerMetrics();
    private final AnswerConstraints constraints = new AnswerConstraints(); // one grammar cache for every API
    private final CompletionHandler completions = new CompletionHandler(metrics, constraints);
    private final ResponsesHandler responses = new ResponsesHandler(metrics, constraints);
    private final AnthropicMessages anthropic = new AnthropicMessages(metrics, constraints);
    private final OllamaHandler ollama = new OllamaHandler(metrics, constraints);
    private final AtomicInteger exchanges = new AtomicInteger(); // being handled now
    private volatile ServedModel model; // null while loading
    private volatile boolean shuttingDown;

    private ApiServer(ServerConfig config, PrintWriter log) {
        this.config = config;
        this.apiKey = config.apiKey() == null ? null : config.apiKey().getBytes(StandardCharsets.UTF_8);
        this.log = new AccessLog(log, config.jsonLog());
        this.debugLog = log;
        this.guard = new CrossSiteGuard(config.host(), config.allowedHosts(), config.corsOrigins());
        jetty = new Server(new VirtualThreadPool());
        HttpConfiguration http = new HttpConfiguration();
        http.setRequestHeaderSize(MAX_HEADER_BYTES);
        http.setSendServerVersion(false);
        // While a request is handled Jetty sets this idle timeout (and restores the connector's, the keep-alive one,
        // after): it bounds the pause between two reads of the body; the first write switches to the send timeout.
        http.setIdleTimeout(config.timeouts().body().toMillis());
        connector = new ServerConnector(jetty, 1, 1, BodyFramingParser.connectionFactory(http));
        connector.setHost(config.host());
        connector.setPort(config.port());
        connector.setIdleTimeout(config.timeouts().idle().toMillis());
        jetty.addConnector(connector);
        jetty.setHandler(new Handler.Abstract() { // blocking: Jetty calls it on a virtual thread of its own
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                dispatch(request, response, callback);
                return true;
            }
        });
        jetty.setErrorHandler(new JsonErrorHandler(this.log));
        headerDeadline = new HeaderDeadline(connector, config.timeouts().header(), this.log);
    }

    /**
     * Listens on {@code host:port} (port 0: any free port) and starts answering; with an {@code apiKey}, every request
     * but /health must carry {@code Authorization: Bearer KEY} (or {@code x-api-key: KEY}). Each request is logged as
     * one line on {@code log}.
     */
    public static ApiServer start(String host, int port, String apiKey, PrintWriter log) {
        return start(ServerConfig.defaults(host, port, apiKey), log);
    }

    /** Listens as {@code config} says and starts answering; each request is logged as one line on {@code log}. */
    public static ApiServer start(ServerConfig config, PrintWriter log) {
        ApiServer server = new ApiServer(config, log);
        try {
            server.jetty.start();
        } catch (Exception e) {
            try {
                server.jetty.stop();
            } catch (Exception ignored) {
                // it did not start: there is nothing more to stop
            }
            for (Throwable cause = e; cause != null; cause = cause.getCause()) {
                if (cause instanceof BindException && config.port() != 0) {
                    throw new PortInUseException(config.host(), config.port(), e);
                }
            }
            Throwable cause = e.getCause() != null && e.getMessage() == null ? e.getCause() : e;
            throw new FsException("cannot listen on " + config.host() + ":" + config.port() + ": " + cause.getMessage());
        }
        server.headerDeadline.start();
        return server;
    }

    /** The address it listens on (with the port chosen when 0 was asked for). */
    public InetSocketAddress address() {
        return new InetSocketAddress(config.host(), connector.getLocalPort());
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
        connector.shutdown(); // closes the listening socket; open connections close after their current response
        ServedModel served = model;
        if (served != null) {
            waitUntil(() -> !isBusy(served.engine().load()), grace);
            served.engine().close();
        }
        waitUntil(() -> exchanges.get() == 0, Duration.ofSeconds(2)); // the cut answers are written
        headerDeadline.stop();
        try {
            jetty.stop();
        } catch (Exception e) {
            debugLog.println(AccessLog.oneLine("fs: stopping the HTTP server: " + e));
            debugLog.flush();
        }
    }

    private static void waitUntil(java.util.function.BooleanSupplier done, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline && !done.getAsBoolean()) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static boolean isBusy(CompletionEngine.Load load) {
        return load.busy() > 0 || load.queued() > 0;
    }

    private void dispatch(Request request, Response response, Callback callback) {
        exchanges.incrementAndGet();
        long start = System.nanoTime();
        Exchange exchange = new Exchange(request, response, callback, config.timeouts());
        String method = exchange.method();
        String path = exchange.path() != null ? exchange.path() : request.getHttpURI().getPathQuery();
        CompletionHandler.Outcome outcome = null;
        String error = null;
        boolean cancelled = false;
        try {
            outcome = answer(exchange, method, path);
        } catch (ApiException e) {
            error = e.getMessage();
            respond(exchange, e);
        } catch (Exchange.ClientGoneException e) {
            cancelled = true;
            error = e.getMessage();
            exchange.abort(e);
        } catch (IOException e) {
            cancelled = true;
            error = "the client went away (" + e.getMessage() + ")";
            exchange.abort(e);
        } catch (RuntimeException | Error e) {
            // A bug, not a bad request: one line here (the stack trace with FS_DEBUG), a 500 there, and serve on.
            error = "internal error: " + e;
            if (System.getenv("FS_DEBUG") != null) e.printStackTrace(debugLog);
            respond(exchange, new ApiException(500, "server_error", "internal_error", null, "internal error: "
                    + e.getClass().getSimpleName() + (e.getMessage() != null ? ": " + e.getMessage() : "")));
        } finally {
            exchange.complete();
            log.log(new AccessLog.Entry(method, path, exchange.status(), cancelled, (System.nanoTime() - start) / 1e9,
                    outcome != null ? outcome.promptTokens() : -1, outcome != null ? outcome.completionTokens() : -1,
                    outcome != null ? outcome.finishReason() : null, error));
            exchanges.decrementAndGet();
        }
    }

    /**
     * Answers the request, after the checks every request passes (header count, Host, CORS, API key); what a
     * completion request came to, else null.
     */
    private CompletionHandler.Outcome answer(Exchange exchange, String method, String path) throws IOException {
        if (AnthropicMessages.owns(path)) exchange.speaks(AnthropicMessages::errorBody);
        if (path.startsWith("/api/")) exchange.speaks(OllamaModels.ERRORS); // Ollama's API, from its first check on
        if (exchange.headerCount() > MAX_HEADERS) {
            throw new ApiException(431, "invalid_request_error", "request_header_fields_too_large", null,
                    "the request has more than " + MAX_HEADERS + " header fields");
        }
        boolean health = path.equals("/health");
        if (!health && !guard.hostAllowed(exchange.header("Host"))) {
            throw new ApiException(403, "invalid_request_error", "host_not_allowed", null, "the Host header "
                    + fs.Quoted.quote(exchange.header("Host")) + " does not name this server: a loopback name, an IP "
                    + "address or the --host address (fs serve --allowed-hosts names others)");
        }
        String origin = guard.allowedOrigin(exchange.header("Origin"));
        if (origin != null) {
            exchange.setHeader("Access-Control-Allow-Origin", origin);
            exchange.setHeader("Vary", "Origin");
            if (method.equals("OPTIONS") && exchange.header("Access-Control-Request-Method") != null) {
                preflight(exchange);
                return null;
            }
        }
        if (!health && !authorized(exchange)) {
            throw new ApiException(401, "invalid_request_error", "invalid_api_key", null,
                    "a valid API key is required: send the header 'Authorization: Bearer KEY' or 'x-api-key: KEY' "
                            + "(fs serve --api-key)");
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
                exchange.sendText(200, "text/plain; version=0.0.4; charset=utf-8", metrics.exposition(load));
            }
            case "/v1/models" -> {
                expect(exchange, "GET");
                exchange.sendJson(200, models());
            }
            case "/v1/chat/completions", "/v1/completions" -> {
                expect(exchange, "POST");
                metrics.requestReceived();
                requireJsonBody(exchange);
                ServedModel served = servedModel();
                served.require(ServedTask.CHAT);
                return completions.handle(exchange, served, path.equals("/v1/chat/completions"));
            }
            case "/v1/responses" -> {
                expect(exchange, "POST");
                metrics.requestReceived();
                requireJsonBody(exchange);
                ServedModel served = servedModel();
                served.require(ServedTask.CHAT);
                return responses.handle(exchange, served);
            }
            case AnthropicMessages.MESSAGES, AnthropicMessages.COUNT_TOKENS -> {
                expect(exchange, "POST");
                boolean message = path.equals(AnthropicMessages.MESSAGES);
                if (message) metrics.requestReceived();
                requireJsonBody(exchange);
                ServedModel served = servedModel();
                served.require(ServedTask.CHAT);
                if (message) return anthropic.message(exchange, served);
                anthropic.countTokens(exchange, served);
            }
            case "/v1/embeddings", "/embeddings" -> {
                expect(exchange, "POST");
                requireJsonBody(exchange);
                ServedModel served = servedModel();
                served.require(ServedTask.EMBEDDING);
                RetrievalHandler.embeddings(exchange, served);
            }
            case "/v1/rerank", "/rerank", "/v2/rerank" -> {
                expect(exchange, "POST");
                requireJsonBody(exchange);
                ServedModel served = servedModel();
                served.require(ServedTask.RERANK);
                RetrievalHandler.rerank(exchange, served);
            }
            case "/tokenize", "/detokenize", "/apply-template" -> { // llama-server's utility endpoints
                expect(exchange, "POST");
                requireJsonBody(exchange);
                ServedModel served = servedModel();
                switch (path) {
                    case "/tokenize" -> LlamaServerUtility.tokenize(exchange, served);
                    case "/detokenize" -> LlamaServerUtility.detokenize(exchange, served);
                    default -> LlamaServerUtility.applyTemplate(exchange, served);
                }
            }
            case "/props", "/slots" -> {
                expect(exchange, "GET");
                ServedModel served = servedModel();
                if (path.equals("/props")) LlamaServerUtility.props(exchange, served);
                else LlamaServerUtility.slots(exchange, served);
            }
            case "/api/chat", "/api/generate" -> {
                expect(exchange, "POST");
                metrics.requestReceived();
                requireJsonBody(exchange);
                ServedModel served = servedModel();
                served.require(ServedTask.CHAT);
                return ollama.handle(exchange, served, path.equals("/api/chat"));
            }
            case "/api/embed", "/api/embeddings" -> {
                expect(exchange, "POST");
                requireJsonBody(exchange);
                ServedModel served = servedModel();
                served.require(ServedTask.EMBEDDING);
                if (path.equals("/api/embed")) {
                    OllamaEmbeddings.embed(exchange, served);
                } else {
                    OllamaEmbeddings.embeddings(exchange, served);
                }
            }
            case "/api/show" -> {
                expect(exchange, "POST");
                requireJsonBody(exchange);
                exchange.sendJson(200, OllamaModels.show(servedModel(),
                        exchange.readJsonObject(MAX_BODY_BYTES)));
            }
            case "/api/tags" -> {
                expect(exchange, "GET");
                exchange.sendJson(200, OllamaModels.tags(model));
            }
            case "/api/ps" -> {
                expect(exchange, "GET");
                exchange.sendJson(200, OllamaModels.running(model));
            }
            case "/api/version" -> {
                expect(exchange, "GET");
                exchange.sendJson(200, OllamaModels.version());
            }
            default -> throw new ApiException(404, "invalid_request_error", "not_found", null,
                    "no such endpoint: " + method + " " + path + " (POST /v1/chat/completions, POST "
                            + "/v1/completions, POST /v1/responses, POST /v1/messages, POST "
                            + "/v1/messages/count_tokens, POST /v1/embeddings, POST /v1/rerank, GET /v1/models, GET "
                            + "/health, GET /metrics, POST /tokenize, POST /detokenize, POST /apply-template, GET "
                            + "/props, GET /slots; Ollama's POST /api/chat, /api/generate, /api/embed, /api/show, GET "
                            + "/api/tags, /api/ps, /api/version)");
        }
        return null;
    }

    /** A browser's CORS preflight from an origin --cors allows: the methods and the headers it asked for. */
    private static void preflight(Exchange exchange) throws IOException {
        exchange.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        String headers = exchange.header("Access-Control-Request-Headers");
        if (headers != null) exchange.setHeader("Access-Control-Allow-Headers", headers);
        exchange.setHeader("Access-Control-Max-Age", "600");
        exchange.sendText(204, "text/plain; charset=utf-8", "");
    }

    /**
     * A request body must be announced (411 otherwise: Content-Length or chunked) and be JSON (415 otherwise): a
     * web page can POST text/plain anywhere without the browser asking first, but not application/json.
     */
    private static void requireJsonBody(Exchange exchange) {
        if (!exchange.hasHeader(HttpHeader.CONTENT_LENGTH) && !exchange.hasHeader(HttpHeader.TRANSFER_ENCODING)) {
            throw new ApiException(411, "invalid_request_error", "length_required", null,
                    "the request has no body: send JSON with a Content-Length (or chunked)");
        }
        String codings = exchange.header("Transfer-Encoding");
        if (codings != null && !codings.strip().equalsIgnoreCase("chunked")) {
            // Jetty has refused any that does not end in chunked (400); the others (gzip, chunked) it does not undo.
            throw new ApiException(501, "server_error", "not_implemented", null, "the transfer coding "
                    + fs.Quoted.quote(codings) + " is not supported: send the body as is or chunked");
        }
        String type = exchange.header("Content-Type");
        String media = type == null ? "" : type.split(";", 2)[0].strip();
        if (!media.equalsIgnoreCase("application/json")) {
            throw new ApiException(415, "invalid_request_error", "unsupported_media_type", null,
                    "the body must be JSON sent as 'Content-Type: application/json', not "
                            + (type == null ? "without a Content-Type" : fs.Quoted.quote(type)));
        }
    }

    /** Sends the error, unless a response was already started (then the client sees the stream end). */
    private static void respond(Exchange exchange, ApiException error) {
        if (exchange.status() >= 0) return;
        try {
            exchange.sendError(error);
        } catch (IOException e) {
            exchange.abort(e); // the client went away: nothing to tell it
        }
    }

    /** Whether the request carries the key: as a bearer token (OpenAI's way) or in x-api-key (Anthropic's). */
    private boolean authorized(Exchange exchange) {
        if (apiKey == null) return true;
        String header = exchange.header("Authorization");
        boolean bearer = header != null && header.regionMatches(true, 0, "Bearer ", 0, 7);
        return (bearer && isKey(header.substring(7))) || isKey(exchange.header("x-api-key"));
    }

    private boolean isKey(String given) {
        // Constant time: how much of the key a guess got right must not show in the response time.
        return given != null && MessageDigest.isEqual(apiKey, given.strip().getBytes(StandardCharsets.UTF_8));
    }

    private static void expect(Exchange exchange, String method) {
        if (!exchange.method().equals(method)) {
            exchange.setHeader("Allow", method);
            throw new ApiException(405, "invalid_request_error", "method_not_allowed", null,
                    exchange.path() + " takes " + method + ", not " + exchange.method());
        }
    }

    private ServedModel servedModel() {
        if (shuttingDown) throw ApiException.unavailable("shutting_down", "the server is shutting down");
        ServedModel served = model;
        if (served == null) throw ApiException.unavailable("loading", "the model is loading; retry in a moment");
        return served;
    }

    private void health(Exchange exchange) throws IOException {
        ObjectNode body = JsonNodeFactory.instance.objectNode();
        if (shuttingDown) {
            body.put("status", "shutting down");
            exchange.sendJson(503, body);
        } else if (model == null) {
            body.put("status", "loading model");
            exchange.setHeader("Retry-After", "1");
            exchange.sendJson(503, body);
        } else {
            body.put("status", "ok");
            exchange.sendJson(200, body);
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
