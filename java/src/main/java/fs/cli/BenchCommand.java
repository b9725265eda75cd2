package fs.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.model.Probe;
import fs.model.SingleSequence;
import fs.tensor.Tensor;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Speed as llama-bench measures it: pp (one batched forward of p prompt tokens into an empty cache) and tg (n
 * single-token forwards from an empty cache), each after a warm-up run, repeated r times; mean ± sample stddev of
 * tokens per second. Like llama-bench, -p and -n take comma-separated lists, one test per value.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, description = "Measures prompt processing and generation speed.")
final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = {"-p", "--n-prompt"}, paramLabel = "N[,N…]", defaultValue = "128", split = ",",
            description = "Prompt tokens of the pp tests, one test per value; 0 skips it (default: ${DEFAULT-VALUE}).")
    int[] promptTokens;

    @Option(names = {"-n", "--n-gen"}, paramLabel = "N[,N…]", defaultValue = "64", split = ",",
            description = "Generated tokens of the tg tests, one test per value; 0 skips it (default: ${DEFAULT-VALUE}).")
    int[] genTokens;

    @Option(names = {"-r", "--repetitions"}, paramLabel = "N", defaultValue = "3",
            description = "Repetitions of each test (default: ${DEFAULT-VALUE}).")
    int repetitions;

    @Option(names = "--json", description = "Print a JSON array with llama-bench's field names instead of a table.")
    boolean json;

    /** One test's timings: {@code nPrompt} tokens in one forward, or {@code nGen} one-token forwards. */
    private record Result(int nPrompt, int nGen, long[] samplesNs) {
        String name() {
            return nPrompt > 0 ? "pp" + nPrompt : "tg" + nGen;
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
            throw new FsException("-p and -n must be ≥ 0 and not all 0; got -p " + joined(promptTokens) + " -n "
                    + joined(genTokens));
        }
        if (repetitions < 1) throw new FsException("-r must be at least 1, got " + repetitions);
        PrintWriter err = spec.commandLine().getErr();
        // Each pp test is one forward of all its tokens, as llama-bench's (up to its 512-token micro-batch).
        try (LoadedModel loaded = modelOptions.load(
                context -> new SingleSequence.Shape(context, Math.max(1, Math.min(mostPrompt, context)), 1), err)) {
            SingleSequence model = loaded.sequence();
            model.checkFits(0, Math.max(mostPrompt, mostGen));
            Random random = new Random(42);
            int vocab = model.config().vocabSize();
            List<Result> results = new ArrayList<>();
            String started = Instant.now().toString();
            for (int n : promptTokens) {
                if (n == 0) continue;
                int[] prompt = random.ints(n, 0, vocab).toArray();
                results.add(measure(n, 0, () -> {
                    model.forward(prompt, 0, Probe.NONE);
                    model.argmax(0); // waits for the device
                }));
            }
            for (int n : genTokens) {
                if (n == 0) continue;
                int[] oneToken = {random.nextInt(vocab)};
                results.add(measure(0, n, () -> {
                    for (int position = 0; position < n; position++) {
                        model.forward(oneToken, position, Probe.NONE);
                        oneToken[0] = model.argmax(0);
                    }
                }));
            }
            PrintWriter out = spec.commandLine().getOut();
            out.print(json ? json(loaded, results, started) : table(loaded, results));
            out.flush();
        }
        return 0;
    }

    private static String joined(int[] values) {
        return Arrays.stream(values).mapToObj(Integer::toString).collect(Collectors.joining(","));
    }

    private Result measure(int nPrompt, int nGen, Runnable test) {
        test.run(); // warm-up: JIT compilation, first-touch of the weights
        long[] samples = new long[repetitions];
        for (int i = 0; i < repetitions; i++) {
            long start = System.nanoTime();
            test.run();
            samples[i] = System.nanoTime() - start;
        }
        return new Result(nPrompt, nGen, samples);
    }

    private String table(LoadedModel loaded, List<Result> results) {
        String model = modelName(loaded);
        String backend = loaded.backend().description();
        int modelWidth = Math.max(30, model.length());
        int backendWidth = Math.max(10, backend.length());
        String format = "| %-" + modelWidth + "s | %10s | %10s | %-" + backendWidth + "s | %7s | %13s | %20s |%n";
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, format, "model", "size", "params", "backend", "threads", "test", "t/s"));
        s.append("| ").append("-".repeat(modelWidth)).append(" | ---------: | ---------: | ")
                .append("-".repeat(backendWidth)).append(" | ------: | ------------: | -------------------: |\n");
        for (Result r : results) {
            double[] ts = r.samplesTs();
            s.append(String.format(Locale.ROOT, format, model,
                    String.format(Locale.ROOT, "%.2f GiB", modelBytes(loaded) / (double) (1L << 30)),
                    String.format(Locale.ROOT, "%.2f M", modelParams(loaded) / 1e6),
                    backend, modelOptions.threadCount(), r.name(),
                    String.format(Locale.ROOT, "%.2f ± %.2f", mean(ts), stddev(ts))));
        }
        return s.toString();
    }

    private String json(LoadedModel loaded, List<Result> results, String started) {
        ObjectMapper mapper = new ObjectMapper();
        ArrayNode array = mapper.createArrayNode();
        for (Result r : results) {
            double[] ts = r.samplesTs();
            double[] ns = new double[r.samplesNs().length];
            for (int i = 0; i < ns.length; i++) ns[i] = r.samplesNs()[i];
            ObjectNode o = array.addObject();
            o.put("model_filename", loaded.source().path().toString());
            o.put("model_type", modelName(loaded));
            o.put("model_size", modelBytes(loaded));
            o.put("model_n_params", modelParams(loaded));
            o.put("backends", loaded.backend().description());
            o.put("n_threads", modelOptions.threadCount());
            o.put("n_batch", loaded.sequence().shape().batchRows());
            o.put("n_ctx", loaded.sequence().shape().contextLength());
            o.put("n_prompt", r.nPrompt());
            o.put("n_gen", r.nGen());
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

    /** The name the user gave (a repo id's or directory's last part) and the stored dtype, e.g. "Qwen3-0.6B bfloat16". */
    private String modelName(LoadedModel loaded) {
        return Path.of(modelOptions.model()).getFileName() + " " + loaded.model().config().torchDtype();
    }

    private static long modelBytes(LoadedModel loaded) {
        return loaded.source().tensors().tensors().stream().mapToLong(t -> t.data().byteSize()).sum();
    }

    private static long modelParams(LoadedModel loaded) {
        return loaded.source().tensors().tensors().stream().mapToLong(Tensor::elementCount).sum();
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
}
