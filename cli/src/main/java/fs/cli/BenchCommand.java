package fs.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.HumanSize;
import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.engine.LoadedModel;
import fs.model.Probe;
import fs.generate.GenerationStats;
import fs.generate.SamplingParams;
import fs.generate.Scheduler;
import fs.generate.StopReason;
import fs.generate.TokenLogprobs;
import fs.generate.TokenSink;
import fs.model.SingleSequence;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Speed as llama-bench measures it: pp (one batched forward of p prompt tokens into an empty cache) and tg (n
 * single-token forwards from an empty cache), each after a warm-up, repeated r times; mean ± sample stddev of
 * tokens per second. Like llama-bench, -p and -n take comma-separated lists, one test per value, and -d runs every
 * test again after each listed depth: that many random tokens already in the cache (filled untimed), the test's
 * positions after them. -ctk and -ctv take lists too: every test runs on a cache of each key type with each value type,
 * the model loaded afresh for each, and the output says which (type_k, type_v).
 *
 * <p>With {@code --parallel}, it measures continuous batching instead: for each listed N, N concurrent greedy streams
 * of n tokens through the {@link Scheduler}, each from its own random prompt of {@link #PARALLEL_PROMPT} tokens (all
 * prefilled in the first step), reporting the aggregate generation speed (every stream's decode forwards over the
 * time from the first stream's first token to the last stream's end) and the mean per-stream speed (each stream's own
 * decode forwards per second, as tg counts them).
 */
// The synopsis picocli would make lists every shared option and breaks the comma lists across lines: the two forms
// and their own options say more.
@Command(name = "bench", mixinStandardHelpOptions = true,
        customSynopsis = {
            "fs bench [MODEL] [-p N[,N...]] [-n N[,N...]] [-d N[,N...]] [-r N] [OPTIONS]",
            "       fs bench [MODEL] --parallel N[,N...] [-n N[,N...]] [-r N] [OPTIONS]"},
        description = "Measures prompt processing and generation speed.")
final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = {"-p", "--n-prompt"}, paramLabel = "N", defaultValue = "128", split = ",",
            description = "Prompt tokens of the pp tests, one test per value; 0 skips it (default: ${DEFAULT-VALUE}).")
    int[] promptTokens;

    @Option(names = {"-n", "--n-gen"}, paramLabel = "N", defaultValue = "64", split = ",",
            description = "Generated tokens of the tg tests, one test per value; 0 skips it (default: ${DEFAULT-VALUE}).")
    int[] genTokens;

    @Option(names = {"-d", "--n-depth"}, paramLabel = "N", defaultValue = "0", split = ",",
            description = "Positions already in the KV cache before each test, one run of the tests per value, as "
                    + "llama-bench's (\"pp512 @ d4096\"); the cache is filled untimed (default: ${DEFAULT-VALUE}).")
    int[] depths;

    @Option(names = {"-r", "--repetitions"}, paramLabel = "N", defaultValue = "3",
            description = "Repetitions of each test (default: ${DEFAULT-VALUE}).")
    int repetitions;

    @Option(names = "--warmup", paramLabel = "SECONDS", defaultValue = "2",
            description = "How long each test runs untimed before it is measured, at least once: the JVM compiles "
                    + "the forward's hot paths in its first seconds, which a small model's runs would measure "
                    + "otherwise; 0 warms up once, as llama-bench does (default: ${DEFAULT-VALUE}).")
    double warmupSeconds;

    /** More warm-up than an hour is a typo. */
    static final double MAX_WARMUP_SECONDS = 3600;

    @Option(names = "--json", description = "Print a JSON array with llama-bench's field names instead of a table.")
    boolean json;

    @Option(names = "--parallel", paramLabel = "N", split = ",",
            description = "Instead of pp and tg: for each N, N concurrent greedy streams of -n tokens decoded together "
                    + "(continuous batching); prints aggregate and per-stream generation t/s (default: none, "
                    + "the pp and tg tests).")
    int[] parallel;

    /** Prompt tokens of each --parallel stream: short, so that the streams' prefill is one step and decode dominates. */
    static final int PARALLEL_PROMPT = 16;
    /** More concurrent streams than this is a typo: each one is a KV cache slot. */
    static final int MAX_PARALLEL = 256;

    /** What every row says of the model and where it ran, taken while the model is loaded. */
    private record Setup(String filename, String model, long bytes, long parameters, String backend, int gpuLayers) {
        static Setup of(LoadedModel<?> loaded) {
            return new Setup(loaded.source().path().toString(), ModelDescription.of(loaded.source()),
                    modelBytes(loaded), ModelDescription.parameters(loaded.source()), loaded.description(),
                    loaded.gpuLayers());
        }
    }

    /**
     * One test's timings: {@code nPrompt} tokens in one forward, or {@code nGen} one-token forwards, after
     * {@code depth} positions in a cache of {@code cacheTypes} sized {@code batchRows} × {@code contextLength}.
     */
    private record Result(KvCacheTypes cacheTypes, int batchRows, int contextLength, int nPrompt, int nGen, int depth,
                          long[] samplesNs) {
        String name() {
            return (nPrompt > 0 ? "pp" + nPrompt : "tg" + nGen) + (depth > 0 ? " @ d" + depth : "");
        }

        double[] samplesTs() {
            double[] ts = new double[samplesNs.length];
            for (int i = 0; i < ts.length; i++) ts[i] = (nPrompt + nGen) / (samplesNs[i] / 1e9);
            return ts;
        }
    }

    @Override
    public Integer call() {
        int mostPrompt = Arrays.stream(promptTokens).max().orElse(0), mostGen = Arrays.stream(genTokens).max().orElse(0);
        if (IntStream.concat(Arrays.stream(promptTokens), Arrays.stream(genTokens)).anyMatch(t -> t < 0)
                || mostPrompt + mostGen == 0) {
            throw usage("-p and -n must be ≥ 0 and not all 0; got -p " + joined(promptTokens) + " -n "
                    + joined(genTokens));
        }
        if (repetitions < 1) throw usage("-r must be at least 1, got " + repetitions);
        if (!(warmupSeconds >= 0 && warmupSeconds <= MAX_WARMUP_SECONDS)) {
            throw usage("--warmup must be between 0 and " + (int) MAX_WARMUP_SECONDS + " seconds, got "
                    + warmupSeconds);
        }
        if (Arrays.stream(depths).anyMatch(d -> d < 0)) throw usage("-d must be ≥ 0, got " + joined(depths));
        int mostDepth = Arrays.stream(depths).max().orElse(0);
        PrintWriter err = spec.commandLine().getErr();
        if (parallel != null) {
            if (mostDepth > 0) throw usage("-d does not apply to --parallel (its streams start empty)");
            return callParallel(mostGen, err);
        }
        // Each pp test is one forward of all its tokens, as llama-bench's (up to its 512-token micro-batch); a depth is
        // filled in forwards of up to 512 tokens.
        int batchRows = Math.max(1, Math.max(mostPrompt, Math.min(mostDepth, 512)));
        List<Result> results = new ArrayList<>();
        String started = Instant.now().toString();
        Setup setup = null;
        for (KvCacheType keys : orDefault(modelOptions.cacheTypesK())) {
            for (KvCacheType values : orDefault(modelOptions.cacheTypesV())) {
                try (LoadedModel<SingleSequence> loaded = modelOptions.load(keys, values,
                        context -> new SingleSequence.Shape(context, Math.min(batchRows, context), 1), err)) {
                    setup = Setup.of(loaded);
                    loaded.awaitUploads(); // the weights as every later token reads them: repacked, where they are
                    run(loaded.state(), mostDepth + Math.max(mostPrompt, mostGen), results);
                }
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? json(setup, results, started) : table(setup, results));
        out.flush();
        return 0;
    }

    /** Each -ctk or -ctv type given; the default alone (null) when none is. */
    private static List<KvCacheType> orDefault(List<KvCacheType> types) {
        return types != null ? types : Collections.singletonList(null);
    }

    /** Every test at every depth on {@code model}, whose context must hold {@code positions}. */
    private void run(SingleSequence model, int positions, List<Result> results) {
        model.checkFits(0, positions);
        Random random = new Random(42); // the same tokens on each cache type
        int vocab = model.config().vocabSize();
        for (int depth : depths) {
            // The tests write positions depth.. only, so the cache is filled once for all of them.
            if (depth > 0) {
                model.forwardInBatches(random.ints(depth, 0, vocab).toArray(), 0, Probe.NONE, (first, rows) -> {});
            }
            for (int n : promptTokens) {
                if (n == 0) continue;
                int[] prompt = random.ints(n, 0, vocab).toArray();
                results.add(measure(model, n, 0, depth, () -> {
                    model.forward(prompt, depth, Probe.NONE);
                    model.argmax(0); // waits for the device
                }));
            }
            for (int n : genTokens) {
                if (n == 0) continue;
                int[] oneToken = {random.nextInt(vocab)};
                results.add(measure(model, 0, n, depth, () -> {
                    for (int position = depth; position < depth + n; position++) {
                        model.forward(oneToken, position, Probe.NONE);
                        oneToken[0] = model.argmax(0);
                    }
                }));
            }
        }
    }

    /**
     * One --parallel test: N streams of nGen tokens on a cache of {@code cacheTypes}; per repetition the aggregate and
     * mean per-stream speeds.
     */
    private record ParallelResult(KvCacheTypes cacheTypes, int streams, int nGen, double[] aggregateTs,
                                  double[] streamTs) {
        String name() {
            return "tg" + nGen;
        }
    }

    private int callParallel(int mostGen, PrintWriter err) {
        if (parallel.length == 0 || Arrays.stream(parallel).anyMatch(n -> n < 1 || n > MAX_PARALLEL)) {
            throw usage("--parallel takes stream counts in 1.." + MAX_PARALLEL + ", got " + joined(parallel));
        }
        if (mostGen == 0) throw usage("--parallel measures generation: give -n a count above 0");
        int needed = PARALLEL_PROMPT + mostGen;
        // One scheduler, one cache, for every test: a test of N streams uses N of its slots, each sized no larger
        // than a stream needs.
        int most = Arrays.stream(parallel).max().orElseThrow();
        List<ParallelResult> results = new ArrayList<>();
        String started = Instant.now().toString();
        Setup setup = null;
        for (KvCacheType keys : orDefault(modelOptions.cacheTypesK())) {
            for (KvCacheType values : orDefault(modelOptions.cacheTypesV())) {
                try (LoadedModel<Scheduler> loaded = modelOptions.loadWith(keys, values, context -> {
                    Scheduler.Config slots =
                            new Scheduler.Config(most, Math.min(context, needed), most * PARALLEL_PROMPT, 0);
                    return (model, cacheTypes) -> new Scheduler(model, slots, cacheTypes);
                }, err); Scheduler scheduler = loaded.state()) {
                    SingleSequence.checkFits(loaded.config(), loaded.contextLength(), 0, needed);
                    setup = Setup.of(loaded);
                    loaded.awaitUploads();
                    runParallel(scheduler, loaded.config().vocabSize(), results);
                }
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? parallelJson(setup, results, started) : parallelTable(setup, results));
        out.flush();
        return 0;
    }

    /** Every --parallel stream count for every -n on {@code scheduler}. */
    private void runParallel(Scheduler scheduler, int vocab, List<ParallelResult> results) {
        Random random = new Random(42); // the same prompts on each cache type
        for (int n : genTokens) {
            if (n == 0) continue;
            // Warm-up (JIT compilation, first-touch of the weights) of every stream count before any is
            // measured: one stream and several run different kernels, compiled at different times.
            long warmUntil = System.nanoTime() + warmupNanos();
            do {
                for (int streams : parallel) runStreams(scheduler, streams, n, vocab, random);
            } while (System.nanoTime() < warmUntil);
            for (int streams : parallel) {
                double[] aggregate = new double[repetitions], perStream = new double[repetitions];
                for (int i = 0; i < repetitions; i++) {
                    double[] speeds = runStreams(scheduler, streams, n, vocab, random);
                    aggregate[i] = speeds[0];
                    perStream[i] = speeds[1];
                }
                results.add(new ParallelResult(scheduler.cacheTypes(), streams, n, aggregate, perStream));
            }
        }
    }

    /**
     * Runs {@code streams} greedy streams of nGen tokens at once, each from a fresh random prompt (so no slot reuses a
     * prefix); returns the aggregate and the mean per-stream decode speed.
     */
    private static double[] runStreams(Scheduler scheduler, int streams, int nGen, int vocab, Random random) {
        CountDownLatch done = new CountDownLatch(streams);
        long[] end = new long[streams];
        GenerationStats[] stats = new GenerationStats[streams];
        RuntimeException[] failure = new RuntimeException[1];
        for (int s = 0; s < streams; s++) {
            int stream = s;
            // Called on the scheduler thread; the latch publishes what they write to this thread.
            scheduler.submit(random.ints(PARALLEL_PROMPT, 0, vocab).toArray(), SamplingParams.greedy(), nGen,
                    new int[0], new TokenSink() {
                        @Override
                        public void onToken(int id, TokenLogprobs logprobs) {
                        }

                        @Override
                        public void onDone(StopReason reason, GenerationStats result) {
                            end[stream] = System.nanoTime();
                            stats[stream] = result;
                            done.countDown();
                        }

                        @Override
                        public void onError(RuntimeException e) {
                            failure[0] = e;
                            done.countDown();
                        }
                    });
        }
        try {
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FsException("interrupted while the streams ran");
        }
        if (failure[0] != null) throw failure[0];
        // The aggregate runs from the first stream's decode start (its prefill's end, as its stats count it) to the
        // last stream's end: one stream's aggregate is then its own decode speed, not one token's sampling faster.
        long from = Long.MAX_VALUE;
        for (int s = 0; s < streams; s++) from = Math.min(from, end[s] - stats[s].decodeNanos());
        long to = Arrays.stream(end).max().orElseThrow();
        long steps = Arrays.stream(stats).mapToLong(GenerationStats::decodeSteps).sum();
        double perStream = Arrays.stream(stats).mapToDouble(GenerationStats::decodeTokensPerSecond).average().orElse(0);
        return new double[] {to == from ? 0 : steps / ((to - from) / 1e9), perStream};
    }

    private String parallelTable(Setup setup, List<ParallelResult> results) {
        int modelWidth = Math.max(30, setup.model().length());
        int backendWidth = Math.max(10, setup.backend().length());
        String format = "| %-" + modelWidth + "s | %-" + backendWidth
                + "s | %3s | %7s | %-6s | %-6s | %7s | %6s | %20s | %20s |%n";
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, format, "model", "backend", "ngl", "threads", "type_k", "type_v",
                "streams", "test", "aggregate t/s", "per-stream t/s"));
        s.append("| ").append("-".repeat(modelWidth)).append(" | ").append("-".repeat(backendWidth))
                .append(" | --: | ------: | :----- | :----- | ------: | -----: | -------------------: ")
                .append("| -------------------: |\n");
        for (ParallelResult r : results) {
            s.append(String.format(Locale.ROOT, format, setup.model(), setup.backend(), setup.gpuLayers(),
                    modelOptions.threadCount(),
                    r.cacheTypes().keys(), r.cacheTypes().values(), r.streams(), r.name(),
                    String.format(Locale.ROOT, "%.2f ± %.2f", mean(r.aggregateTs()), stddev(r.aggregateTs())),
                    String.format(Locale.ROOT, "%.2f ± %.2f", mean(r.streamTs()), stddev(r.streamTs()))));
        }
        return s.toString();
    }

    private String parallelJson(Setup setup, List<ParallelResult> results, String started) {
        ObjectMapper mapper = new ObjectMapper();
        ArrayNode array = mapper.createArrayNode();
        for (ParallelResult r : results) {
            ObjectNode o = array.addObject();
            o.put("model_filename", setup.filename());
            o.put("model_type", setup.model());
            o.put("backends", setup.backend());
            o.put("n_gpu_layers", setup.gpuLayers());
            o.put("n_threads", modelOptions.threadCount());
            o.put("type_k", r.cacheTypes().keys().label());
            o.put("type_v", r.cacheTypes().values().label());
            o.put("n_parallel", r.streams());
            o.put("n_prompt", PARALLEL_PROMPT);
            o.put("n_gen", r.nGen());
            o.put("test_time", started);
            o.put("avg_ts", mean(r.aggregateTs()));
            o.put("stddev_ts", stddev(r.aggregateTs()));
            o.put("stream_avg_ts", mean(r.streamTs()));
            o.put("stream_stddev_ts", stddev(r.streamTs()));
            ArrayNode samples = o.putArray("samples_ts");
            for (double t : r.aggregateTs()) samples.add(t);
            ArrayNode streamSamples = o.putArray("stream_samples_ts");
            for (double t : r.streamTs()) streamSamples.add(t);
        }
        return array.toPrettyString() + System.lineSeparator();
    }

    private static String joined(int[] values) {
        return Arrays.stream(values).mapToObj(Integer::toString).collect(Collectors.joining(","));
    }

    private Result measure(SingleSequence model, int nPrompt, int nGen, int depth, Runnable test) {
        long warmUntil = System.nanoTime() + warmupNanos();
        do test.run(); // warm-up: JIT compilation, first-touch of the weights
        while (System.nanoTime() < warmUntil);
        long[] samples = new long[repetitions];
        for (int i = 0; i < repetitions; i++) {
            long start = System.nanoTime();
            test.run();
            samples[i] = System.nanoTime() - start;
        }
        return new Result(model.cacheTypes(), model.shape().batchRows(), model.shape().contextLength(), nPrompt, nGen,
                depth, samples);
    }

    private long warmupNanos() {
        return (long) (warmupSeconds * 1e9);
    }

    private String table(Setup setup, List<Result> results) {
        int modelWidth = Math.max(30, setup.model().length());
        int backendWidth = Math.max(10, setup.backend().length());
        String format = "| %-" + modelWidth + "s | %10s | %10s | %-" + backendWidth
                + "s | %3s | %7s | %-6s | %-6s | %13s | %20s |%n";
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, format, "model", "size", "params", "backend", "ngl", "threads", "type_k",
                "type_v", "test", "t/s"));
        s.append("| ").append("-".repeat(modelWidth)).append(" | ---------: | ---------: | ")
                .append("-".repeat(backendWidth))
                .append(" | --: | ------: | :----- | :----- | ------------: | -------------------: |\n");
        for (Result r : results) {
            double[] ts = r.samplesTs();
            s.append(String.format(Locale.ROOT, format, setup.model(), HumanSize.of(setup.bytes()),
                    parameterCount(setup.parameters()), setup.backend(), setup.gpuLayers(), modelOptions.threadCount(),
                    r.cacheTypes().keys(), r.cacheTypes().values(), r.name(),
                    String.format(Locale.ROOT, "%.2f ± %.2f", mean(ts), stddev(ts))));
        }
        return s.toString();
    }

    private String json(Setup setup, List<Result> results, String started) {
        ObjectMapper mapper = new ObjectMapper();
        ArrayNode array = mapper.createArrayNode();
        for (Result r : results) {
            double[] ts = r.samplesTs();
            double[] ns = new double[r.samplesNs().length];
            for (int i = 0; i < ns.length; i++) ns[i] = r.samplesNs()[i];
            ObjectNode o = array.addObject();
            o.put("model_filename", setup.filename());
            o.put("model_type", setup.model());
            o.put("model_size", setup.bytes());
            o.put("model_n_params", setup.parameters());
            o.put("backends", setup.backend());
            o.put("n_gpu_layers", setup.gpuLayers());
            o.put("n_threads", modelOptions.threadCount());
            o.put("n_batch", r.batchRows());
            o.put("n_ctx", r.contextLength());
            o.put("type_k", r.cacheTypes().keys().label());
            o.put("type_v", r.cacheTypes().values().label());
            o.put("n_prompt", r.nPrompt());
            o.put("n_gen", r.nGen());
            o.put("n_depth", r.depth());
            o.put("test_time", started);
            o.put("avg_ns", Math.round(mean(ns)));
            o.put("stddev_ns", Math.round(stddev(ns)));
            o.put("avg_ts", mean(ts));
            o.put("stddev_ts", stddev(ts));
            ArrayNode samplesNs = o.putArray("samples_ns");
            for (long n : r.samplesNs()) samplesNs.add(n);
            ArrayNode samplesTs = o.putArray("samples_ts");
            for (double t : ts) samplesTs.add(t);
        }
        return array.toPrettyString() + System.lineSeparator();
    }

    private static long modelBytes(LoadedModel<?> loaded) {
        return loaded.source().tensors().tensors().stream().mapToLong(t -> t.data().byteSize()).sum();
    }

    /** The params column as llama-bench writes it: "596.05 M", "8.19 B". */
    static String parameterCount(long parameters) {
        return parameters < 1_000_000_000 ? String.format(Locale.ROOT, "%.2f M", parameters / 1e6)
                : String.format(Locale.ROOT, "%.2f B", parameters / 1e9);
    }

    private static double mean(double[] values) {
        double sum = 0;
        for (double v : values) sum += v;
        return sum / values.length;
    }

    /** Sample standard deviation (n - 1), 0 for a single value, as llama-bench reports it. */
    private static double stddev(double[] values) {
        if (values.length < 2) return 0;
        double mean = mean(values), sum = 0;
        for (double v : values) sum += (v - mean) * (v - mean);
        return Math.sqrt(sum / (values.length - 1));
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
