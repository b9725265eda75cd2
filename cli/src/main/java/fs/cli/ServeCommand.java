package fs.cli;

import fs.FsException;
import fs.chat.ChatTemplate;
import fs.generate.GenerationConfig;
import fs.generate.GenerationStats;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.generate.Scheduler;
import fs.model.SingleSequence;
import fs.server.OpenAiServer;
import fs.server.SchedulerEngine;
import fs.server.ServedModel;
import fs.generate.TokenLogprobs;
import fs.generate.TokenSink;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
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
                + "requests that leave a field out, as llama-server's do; a request's own field wins.")
final class ServeCommand implements Callable<Integer> {
    /** How long running requests may go on after SIGTERM before they are cut. */
    static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(5);
    /**
     * Most prompt tokens one scheduler step runs beside the decode rows: a long prompt is prefilled in chunks this
     * size, so the other streams wait at most one chunk's forward for their next token.
     */
    static final int PREFILL_CHUNK = 256;

    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Mixin
    SamplingOptions samplingOptions;

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
            description = "Require 'Authorization: Bearer KEY' on every request but /health (default: none).")
    String apiKey;

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
        if (apiKey != null && apiKey.isBlank()) throw new FsException("--api-key is empty");
        if (alias != null && alias.isBlank()) throw new FsException("--alias is empty");
        String model = modelOptions.model();
        CountDownLatch stop = new CountDownLatch(1);
        OpenAiServer server = OpenAiServer.start(host, port, apiKey, err);
        InetSocketAddress address = server.address();
        err.println("fs: listening on http://" + address.getHostString() + ":" + address.getPort()
                + " (" + parallel + (parallel == 1 ? " slot, " : " slots, ") + queue + " queued at most); loading "
                + model);
        err.flush();
        // The scheduler holds every slot's KV cache; the one-sequence model the loader makes needs only one position.
        AtomicInteger context = new AtomicInteger();
        try (LoadedModel loaded = modelOptions.load(c -> {
            context.set(c);
            return new SingleSequence.Shape(1, 1, 1);
        }, err)) {
            int perSlot = context.get() / parallel;
            if (perSlot < 1) {
                throw new FsException("--ctx " + context.get() + " shared among --parallel " + parallel + " slots "
                        + "leaves none for each: raise --ctx or lower --parallel");
            }
            try {
                serve(server, loaded, new Scheduler.Config(parallel, perSlot, PREFILL_CHUNK, queue),
                        alias != null ? alias : modelId(model), stop, err);
            } finally {
                server.shutdown(SHUTDOWN_GRACE); // before the model closes: running requests still use it
            }
        } finally {
            server.shutdown(SHUTDOWN_GRACE); // when the model did not load; else a no-op
        }
        err.println("fs: stopped");
        return 0;
    }

    private void serve(OpenAiServer server, LoadedModel loaded, Scheduler.Config slots, String id,
                       CountDownLatch stop, PrintWriter err) throws InterruptedException {
        GenerationConfig config = loaded.generationConfig();
        // Each request draws its own: a fresh random seed unless --seed fixes one, as in llama-server.
        Supplier<SamplingParams> defaults = () -> samplingOptions.resolve(config);
        defaults.get(); // a generation_config.json no sampler takes fails now, not at each request
        // A weights file that changed under the mapping fails each request with the line that names it.
        SchedulerEngine engine = SchedulerEngine.start(loaded.model(), slots, loaded.stopIds(), () -> {
            try {
                loaded.checkUnchanged();
            } catch (ModelFileChangedException e) {
                throw new FsException(e.getMessage(), e);
            }
        });
        ServedModel served = new ServedModel(id, System.currentTimeMillis() / 1000,
                loaded.source().tokenizer(), chatTemplate(loaded), defaults, engine);
        try {
            warmUp(served);
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
     * Runs two tokens through the engine and generates two, so that the JIT compiles the prompt and decode kernels
     * before the first client waits for them (on the CPU a cold first request spends seconds compiling); /health
     * says 503 until then.
     */
    private static void warmUp(ServedModel served) throws InterruptedException {
        int[] prompt = served.tokenizer().encode("<|im_start|>user\n");
        if (prompt.length < 2) return;
        CountDownLatch done = new CountDownLatch(1);
        RuntimeException[] failure = {null};
        served.engine().submit(prompt, SamplingParams.greedy(), 2, -1, new TokenSink() {
            @Override
            public void onToken(int id, TokenLogprobs logprobs) {}

            @Override
            public void onDone(StopReason reason, GenerationStats stats) {
                done.countDown();
            }

            @Override
            public void onError(RuntimeException e) {
                failure[0] = e;
                done.countDown();
            }
        });
        done.await();
        if (failure[0] != null) throw failure[0];
    }

    /** The name clients give in "model": a local model's file or directory name, else the repo as given. */
    static String modelId(String model) {
        Path path = Path.of(model);
        if (Files.exists(path) && path.getFileName() != null) return path.toAbsolutePath().normalize().getFileName().toString();
        return model;
    }

    /** The chat template, or the reason there is none, given to each chat request that needs it. */
    private static Supplier<ChatTemplate> chatTemplate(LoadedModel loaded) {
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
