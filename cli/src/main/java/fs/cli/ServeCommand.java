package fs.cli;

import fs.FsException;
import fs.chat.ChatTemplate;
import fs.embed.Embeddings;
import fs.embed.Reranker;
import fs.embed.ScheduledRetrieval;
import fs.engine.Engine;
import fs.engine.LoadedModel;
import fs.generate.SamplingParams;
import fs.generate.Scheduler;
import fs.model.GenerationConfig;
import fs.model.Pooling;
import fs.server.ApiServer;
import fs.server.PortInUseException;
import fs.server.SchedulerEngine;
import fs.server.ServedTask;
import fs.server.ServerConfig;
import fs.server.ServedModel;
import fs.server.WarmUp;
import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import sun.misc.Signal;

// The bundle gives --seed serve's description (a shared option has one description, run's and chat's).
@Command(name = "serve", mixinStandardHelpOptions = true, resourceBundle = "fs.cli.ServeHelp",
        description = "Serves the model over an OpenAI-compatible HTTP API (/v1/chat/completions, /v1/completions, "
                + "/v1/models, /health, /metrics) until SIGTERM or Ctrl-C. The sampling flags set the defaults of "
                + "requests that leave a field out, as llama-server's do; a request's own field wins. With "
                + "--embedding it serves /v1/embeddings instead of the completions, with --rerank /v1/rerank.")
final class ServeCommand implements Callable<Integer> {
    /** How long running requests may go on after SIGTERM before they are cut. */
    static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(5);

    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Mixin
    SamplingOptions samplingOptions;

    @Option(names = {"--embedding", "--embeddings"},
            description = "Serve embeddings on POST /v1/embeddings (OpenAI's API) instead of completions, as "
                    + "llama-server's --embedding: the model must be an embedding model, such as Qwen3-Embedding "
                    + "(default: off).")
    boolean embedding;

    @Option(names = {"--rerank", "--reranking"},
            description = "Serve reranking on POST /v1/rerank (llama-server's, Jina's and Cohere's API) instead of "
                    + "completions: the model must be a reranker, such as Qwen3-Reranker (default: off).")
    boolean rerank;

    @Option(names = "--host", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "Address to listen on (default: ${DEFAULT-VALUE}, this machine only; 0.0.0.0 for every "
                    + "interface).")
    String host;

    private int port = 8080;
    private int parallel = 1;
    private int queue = 8;

    @Option(names = {"-a", "--alias"}, paramLabel = "NAME",
            description = "The model's id: what GET /v1/models lists and a request's \"model\" must be, if given "
                    + "(default: the model's directory or file name, or the repo id as given).")
    String alias;

    @Option(names = "--api-key", paramLabel = "KEY",
            description = "Require 'Authorization: Bearer KEY' (or 'x-api-key: KEY') on every request but /health "
                    + "(default: none).")
    String apiKey;

    @Option(names = "--allowed-hosts", paramLabel = "HOST", split = ",",
            description = "Host header names to serve besides loopback names, IP addresses and --host; '*' for any. "
                    + "Others get 403: the defense against DNS rebinding (default: none).")
    List<String> allowedHosts = new ArrayList<>();

    @Option(names = "--cors", paramLabel = "ORIGIN", split = ",",
            description = "A browser origin (https://app.example) that may call the API from its pages; '*' for any. "
                    + "Without it no CORS header is sent (default: none).")
    List<String> corsOrigins = new ArrayList<>();

    @Option(names = "--log-format", paramLabel = "FORMAT", completionCandidates = LogFormats.class,
            description = "The request log on stderr: text (one line per request) or json (one object per line) "
                    + "(default: text).")
    void logFormat(String value) {
        if (!value.equals("text") && !value.equals("json")) {
            throw usage("--log-format must be text or json, got '" + value + "'");
        }
        jsonLog = value.equals("json");
    }

    /** --log-format's values, for completion and for the tests that try every option. */
    static final class LogFormats implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return List.of("text", "json").iterator();
        }
    }

    private boolean jsonLog;
    private ServerConfig.Timeouts timeouts = ServerConfig.Timeouts.DEFAULTS;

    @Option(names = "--header-timeout", paramLabel = "S",
            description = "Seconds a client may take to send a request's headers; then 408 (default: 60, nginx's).")
    void headerTimeout(int seconds) {
        timeouts = new ServerConfig.Timeouts(timeout("--header-timeout", seconds), timeouts.body(), timeouts.send(),
                timeouts.idle());
    }

    @Option(names = "--body-timeout", paramLabel = "S",
            description = "Seconds a request body may pause between two reads; then 408 (default: 60).")
    void bodyTimeout(int seconds) {
        timeouts = new ServerConfig.Timeouts(timeouts.header(), timeout("--body-timeout", seconds), timeouts.send(),
                timeouts.idle());
    }

    @Option(names = "--send-timeout", paramLabel = "S",
            description = "Seconds a client may read nothing of its answer; then it is cancelled and its slot freed "
                    + "(default: 60).")
    void sendTimeout(int seconds) {
        timeouts = new ServerConfig.Timeouts(timeouts.header(), timeouts.body(), timeout("--send-timeout", seconds),
                timeouts.idle());
    }

    @Option(names = "--idle-timeout", paramLabel = "S",
            description = "Seconds a kept-alive connection may wait for its next request (default: 75).")
    void idleTimeout(int seconds) {
        timeouts = new ServerConfig.Timeouts(timeouts.header(), timeouts.body(), timeouts.send(),
                timeout("--idle-timeout", seconds));
    }

    private Duration timeout(String flag, int seconds) {
        if (seconds < 1) throw usage(flag + " must be at least 1 second, got " + seconds);
        return Duration.ofSeconds(seconds);
    }

    @Option(names = "--port", paramLabel = "N", description = "Port to listen on; 0 picks a free one (default: 8080).")
    void port(int value) {
        if (value < 0 || value > 65535) throw usage("--port must be between 0 and 65535, got " + value);
        port = value;
    }

    @Option(names = {"--parallel", "-np"}, paramLabel = "N",
            description = "Requests decoded together in each forward, each in its own slot of the KV cache; the context "
                    + "(--ctx) is shared out among them, as llama-server does (default: 1).")
    void parallel(int value) {
        if (value < 1 || value > 256) throw usage("--parallel must be in 1..256, got " + value);
        parallel = value;
    }

    @Option(names = "--queue", paramLabel = "N",
            description = "Requests that may wait for a free slot; more get 503 with Retry-After (default: 8).")
    void queue(int value) {
        if (value < 1) throw usage("--queue must be at least 1, got " + value);
        queue = value;
    }

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter err = spec.commandLine().getErr();
        if (apiKey != null && apiKey.isBlank()) throw usage("--api-key is empty");
        if (alias != null && alias.isBlank()) throw usage("--alias is empty");
        if (embedding && rerank) throw usage("--embedding and --rerank are exclusive: a server does one or the other");
        ServedTask task = embedding ? ServedTask.EMBEDDING : rerank ? ServedTask.RERANK : ServedTask.CHAT;
        String model = modelOptions.model();
        modelOptions.offload(); // -ngl's usage errors come before the port is taken
        CountDownLatch stop = new CountDownLatch(1);
        ApiServer server;
        try {
            server = ApiServer.start(
                    new ServerConfig(host, port, apiKey, allowedHosts, corsOrigins, timeouts, jsonLog), err);
        } catch (PortInUseException e) {
            throw new FsException(e.getMessage() + ": choose another with --port N (--port 0 picks a free one)", e);
        }
        InetSocketAddress address = server.address();
        err.println("fs: listening on http://" + address.getHostString() + ":" + address.getPort()
                + " (" + parallel + (parallel == 1 ? " slot, " : " slots, ") + queue + " queued at most); loading "
                + model);
        err.flush();
        // The scheduler holds every slot's KV cache: the context is shared out among them, as llama-server does.
        // It is closed here too (closing is idempotent) for when serve fails before the server took it over.
        try (LoadedModel<Scheduler> loaded = modelOptions.loadWith(source -> checkPooling(task, source), context -> {
            int perSlot = context / parallel;
            if (perSlot < 1) {
                throw new FsException("--ctx " + context + " shared among --parallel " + parallel + " slots "
                        + "leaves none for each: raise --ctx or lower --parallel");
            }
            Scheduler.Config slots = new Scheduler.Config(parallel, perSlot, Engine.PREFILL_CHUNK, queue);
            return (uploaded, cacheTypes) -> new Scheduler(uploaded, slots, cacheTypes);
        }, err); Scheduler scheduler = loaded.state()) {
            try {
                serve(server, loaded, task, alias != null ? alias : modelId(model), stop, err);
            } finally {
                server.shutdown(SHUTDOWN_GRACE); // before the model closes: running requests still use it
            }
        } finally {
            server.shutdown(SHUTDOWN_GRACE); // when the model did not load; else a no-op
        }
        err.println("fs: stopped");
        return 0;
    }

    private void serve(ApiServer server, LoadedModel<Scheduler> loaded, ServedTask task, String id,
                       CountDownLatch stop, PrintWriter err) throws InterruptedException {
        Tokenizer tokenizer = loaded.source().tokenizer();
        ScheduledRetrieval retrieval = task == ServedTask.CHAT ? null : new ScheduledRetrieval(loaded, tokenizer);
        // What the loaded weights and the vocabulary tell (the pooling was checked before the upload).
        if (task == ServedTask.CHAT && !loaded.model().hasOutputProjection()) {
            throw new FsException(loaded.source().path() + " is an embedding model (no lm_head): serve it with "
                    + "--embedding");
        }
        if (task == ServedTask.RERANK) retrieval.checkReranks();
        GenerationConfig config = loaded.source().generationConfig();
        // Each request draws its own: a fresh random seed unless --seed fixes one, as in llama-server.
        Supplier<SamplingParams> defaults = () -> samplingOptions.resolve(config);
        defaults.get(); // a generation_config.json no sampler takes fails now, not at each request
        // A weights file that changed under the mapping fails each request with the line that names it.
        SchedulerEngine engine = SchedulerEngine.over(loaded.state(), loaded.source().stopIds(), () -> {
            try {
                ModelFileChangedException.checkUnchanged(loaded.source());
            } catch (ModelFileChangedException e) {
                throw new FsException(e.getMessage(), e);
            }
        });
        ServedModel served = new ServedModel(id, System.currentTimeMillis() / 1000,
                ModelDescription.details(loaded.source()), tokenizer, chatTemplate(loaded),
                defaults, engine, task, retrieval);
        try {
            WarmUp.run(served);
        } catch (RuntimeException | InterruptedException e) {
            engine.close(); // never handed to the server, which would close it
            throw e;
        }
        // From now on SIGTERM (and Ctrl-C) end the server cleanly, with exit 0; before, while the model loads, there
        // is nothing to finish and the JVM's default (exit 143) is right. sun.misc.Signal (jdk.unsupported, kept open
        // by JEP 260 for this) is the only way to catch SIGTERM without entering the JVM's shutdown: a shutdown hook
        // could drain the server, but the JVM would still exit 143 and Main's System.exit would block in it.
        Signal.handle(new Signal("TERM"), signal -> stop.countDown());
        Signal.handle(new Signal("INT"), signal -> stop.countDown());
        server.ready(served);
        err.println("fs: ready: model \"" + served.id() + "\"");
        err.flush();
        stop.await();
        err.println("fs: shutting down: running requests get " + SHUTDOWN_GRACE.toSeconds() + " s to finish");
        err.flush();
    }

    /**
     * Refuses, before the weights are uploaded, a model whose pooling does not fit the task: an embedding model served
     * for chat or reranking, or a causal LM served to embed (what the weights tell is checked once they are loaded).
     */
    private static void checkPooling(ServedTask task, ModelSource source) {
        String name = source.path().toString();
        switch (task) {
            case CHAT -> {
                if (source.pooling() == Pooling.LAST) {
                    throw new FsException(name + " is an embedding model (pooling last): serve it with --embedding");
                }
            }
            case EMBEDDING -> Embeddings.check(name, source.pooling());
            case RERANK -> Reranker.check(name, source.pooling(), true);
        }
    }

    /** The name clients give in "model": a local model's file or directory name, else the repo as given. */
    static String modelId(String model) {
        Path path = Path.of(model);
        if (Files.exists(path) && path.getFileName() != null) return path.toAbsolutePath().normalize().getFileName().toString();
        return model;
    }

    /** The chat template, or the reason there is none, given to each chat request that needs it. */
    private static Supplier<ChatTemplate> chatTemplate(LoadedModel<?> loaded) {
        try {
            ChatTemplate template = loaded.source().chatTemplate();
            return () -> template;
        } catch (FsException e) {
            return () -> {
                throw e;
            };
        }
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
