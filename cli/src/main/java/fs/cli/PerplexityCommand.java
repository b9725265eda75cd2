package fs.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.engine.LoadedModel;
import fs.eval.Estimate;
import fs.eval.KlDivergence;
import fs.eval.LogSoftmax;
import fs.eval.Perplexity;
import fs.eval.WindowProgress;
import fs.eval.Windows;
import fs.model.Probe;
import fs.model.SingleSequence;
import fs.progress.Terminal;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.IntStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Perplexity, and KL divergence against a base model, as llama-perplexity computes and prints them, so that the
 * figures compare with llama.cpp's: the text is cut into windows of -c tokens ({@link Windows}), each window runs
 * from an empty cache and is scored on its second half. With a base, both models run each window side by side, so
 * no file of logits is written; only the per-token KLD and Δp values are kept, for their percentiles.
 *
 * <p>The whole text is tokenized at once, as llama-perplexity does, with nothing added (Qwen3 has no BOS). One
 * difference remains: fs's tokenizer, as Hugging Face's, reads the text of an added token ("&lt;|endoftext|&gt;") as that
 * token, where llama-perplexity tokenizes it as plain text; evaluation texts rarely hold one.
 */
// The bundle gives -c the window's description here (a shared option has one description, a context length's).
@Command(name = "perplexity", mixinStandardHelpOptions = true, resourceBundle = "fs.cli.WindowedCommands",
        description = {"Perplexity of a text over windows of -c tokens (default 512 here), each scored on its second "
                + "half, as llama-perplexity computes it; with --kl-divergence-base, llama-perplexity's "
                + "--kl-divergence figures against that model too."})
final class PerplexityCommand implements Callable<Integer> {
    /** llama-perplexity's default -c. */
    static final int DEFAULT_WINDOW = 512;

    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = {"-f", "--file"}, paramLabel = "TEXT", required = true,
            description = "The text, UTF-8 (required; one final newline is dropped, as llama.cpp does).")
    Path textFile;

    @Option(names = "--kl-divergence-base", paramLabel = "BASE",
            description = "A model to compare with (any MODEL form, e.g. the bf16 checkpoint of a GGUF file): "
                    + "KL divergence, same top token, Δp and both perplexities (default: none, perplexity only).")
    String base;

    private int maxWindows;

    @Option(names = "--json", description = "Print one JSON object instead of text (fractions, not percentages).")
    boolean json;

    @Option(names = "--chunks", paramLabel = "N", description = "Evaluate at most N windows (default: all).")
    void chunks(int n) {
        if (n < 1) throw new ParameterException(spec.commandLine(), "--chunks must be at least 1, got " + n);
        maxWindows = n;
    }

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        if (modelOptions.ctx == null) modelOptions.ctx = DEFAULT_WINDOW;
        int window = modelOptions.ctx;
        if (window < Windows.MIN_CONTEXT) {
            throw new ParameterException(spec.commandLine(), "-c must be at least " + Windows.MIN_CONTEXT
                    + " for perplexity (a window is scored on its second half), got " + window);
        }
        String text = readText();
        SingleSequence.Shape shape = shape(window);
        try (LoadedModel<SingleSequence> model = modelOptions.load(context -> shape, err);
             LoadedModel<SingleSequence> baseModel =
                     base == null ? null : modelOptions.load(base, context -> shape, err)) {
            int[] tokens = tokenize(model, baseModel, text);
            Windows windows = Windows.of(tokens, window, maxWindows, "-f " + textFile);
            err.printf(Locale.ROOT, "fs: %s: %d tokens, %d windows of %d (%d tokens scored)%n", textFile, tokens.length,
                    windows.count(), window, (long) windows.count() * windows.scoredPerWindow());
            Perplexity perplexity = new Perplexity();
            KlDivergence kl = baseModel == null ? null : new KlDivergence();
            run(windows, model, baseModel, perplexity, kl, err);
            PrintWriter out = spec.commandLine().getOut();
            out.print(json ? json(model, baseModel, windows, perplexity, kl) : text(perplexity, kl));
            out.flush();
        }
        return 0;
    }

    /**
     * One forward per window when it fits a prefill batch, with logits for its second half only (the first half's
     * are never scored, and the lm_head is the largest matmul); longer windows in batches, every row with logits.
     */
    private static SingleSequence.Shape shape(int window) {
        int batchRows = Math.min(window, ModelOptions.PREFILL_BATCH);
        return new SingleSequence.Shape(window, batchRows, window <= batchRows ? window - window / 2 : batchRows);
    }

    private String readText() {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(textFile);
        } catch (NoSuchFileException e) {
            throw new FsException("-f " + textFile + ": no such file");
        } catch (IOException e) {
            throw new FsException("-f " + textFile + ": cannot read: " + e.getMessage(), e);
        }
        String text = TokenizeCommand.readUtf8(bytes, "-f " + textFile);
        return text.endsWith("\n") ? text.substring(0, text.length() - 1) : text; // llama.cpp drops one '\n'
    }

    /**
     * The text's tokens, as the base tokenizes it when there is one (llama-perplexity takes them from the base's
     * run); a model compared with it must see the same tokens and give logits over the same vocabulary.
     */
    private int[] tokenize(LoadedModel<SingleSequence> model, LoadedModel<SingleSequence> baseModel, String text) {
        int[] tokens = (baseModel != null ? baseModel : model).source().tokenizer().encode(text);
        if (baseModel == null) return tokens;
        int vocab = model.model().config().vocabSize();
        int baseVocab = baseModel.model().config().vocabSize();
        if (vocab != baseVocab) {
            throw new FsException("cannot compare " + model.source().path() + " with " + baseModel.source().path()
                    + ": their vocabularies differ (" + vocab + " and " + baseVocab + " tokens)");
        }
        int[] own = model.source().tokenizer().encode(text);
        if (!Arrays.equals(own, tokens)) {
            throw new FsException("cannot compare " + model.source().path() + " with " + baseModel.source().path()
                    + ": they tokenize " + textFile + " differently (their vocabularies differ)");
        }
        return tokens;
    }

    /**
     * Rows of logits read to the host and scored together, in parallel: with Qwen3's vocabulary a row's float64
     * softmax costs milliseconds, as much as a GPU's forward of the row's token. 32 rows of both models are 39 MB.
     */
    private static final int ROWS_SCORED_TOGETHER = 32;

    /**
     * Runs every window through the model (and the base, batch by batch in step, each with its own cache) and adds
     * each scored position to the figures, in position order (so the sums do not depend on the threads).
     */
    private void run(Windows windows, LoadedModel<SingleSequence> model, LoadedModel<SingleSequence> baseModel,
                     Perplexity perplexity, KlDivergence kl, PrintWriter err) {
        SingleSequence q = model.state();
        SingleSequence b = baseModel == null ? null : baseModel.state();
        int batchRows = q.shape().batchRows();
        int vocab = q.config().vocabSize();
        float[][] rows = new float[ROWS_SCORED_TOGETHER][vocab];
        float[][] baseRows = b == null ? null : new float[ROWS_SCORED_TOGETHER][vocab];
        int[] targets = new int[ROWS_SCORED_TOGETHER];
        WindowProgress progress = new WindowProgress(err, "perplexity", Terminal.stderrIsTerminal(), windows.count());
        try {
            for (int w = 0; w < windows.count(); w++) {
                int[] tokens = windows.window(w);
                for (int start = 0; start < tokens.length; start += batchRows) {
                    int[] batch = Arrays.copyOfRange(tokens, start, Math.min(tokens.length, start + batchRows));
                    q.forward(batch, start, Probe.NONE);
                    if (b != null) b.forward(batch, start, Probe.NONE);
                    // Logit row r belongs to the token at position firstRow + r; the scored ones are consecutive.
                    int logitRows = q.logitRows();
                    int firstRow = start + batch.length - logitRows;
                    int from = Math.max(0, windows.firstScored() - firstRow);
                    int to = Math.min(logitRows, windows.lastScored() + 1 - firstRow);
                    for (int group = from; group < to; group += ROWS_SCORED_TOGETHER) {
                        int n = Math.min(ROWS_SCORED_TOGETHER, to - group);
                        for (int i = 0; i < n; i++) {
                            q.readLogits(group + i, rows[i]);
                            if (b != null) b.readLogits(group + i, baseRows[i]);
                            targets[i] = tokens[firstRow + group + i + 1];
                        }
                        if (kl == null) {
                            double[] nll = IntStream.range(0, n).parallel()
                                    .mapToDouble(i -> LogSoftmax.negativeLogLikelihood(rows[i], targets[i])).toArray();
                            for (double x : nll) perplexity.add(x);
                        } else {
                            KlDivergence.Token[] compared = IntStream.range(0, n).parallel()
                                    .mapToObj(i -> KlDivergence.compare(baseRows[i], rows[i], targets[i]))
                                    .toArray(KlDivergence.Token[]::new);
                            for (KlDivergence.Token token : compared) {
                                kl.add(token);
                                perplexity.add(token.nll());
                            }
                        }
                    }
                }
                ModelFileChangedException.checkUnchanged(model.source());
                if (baseModel != null) ModelFileChangedException.checkUnchanged(baseModel.source());
                progress.windowDone(kl == null
                        ? String.format(Locale.ROOT, "PPL %.4f", perplexity.estimate().value())
                        : String.format(Locale.ROOT, "PPL %.4f, KLD %.6f, same top %.2f %%",
                                perplexity.estimate().value(), kl.meanKld(), 100 * kl.sameTopFraction()));
            }
        } finally {
            progress.end();
        }
    }

    /** llama-perplexity's final lines: its "Final estimate", and with a base its three statistics sections. */
    private static String text(Perplexity perplexity, KlDivergence kl) {
        StringBuilder s = new StringBuilder();
        Estimate ppl = perplexity.estimate();
        s.append(String.format(Locale.ROOT, "PPL = %.4f ± %.5f%n", ppl.value(), ppl.uncertainty()));
        if (kl == null) return s.toString();
        KlDivergence.Summary k = kl.summary();
        s.append(String.format(Locale.ROOT, "%n====== Perplexity statistics ======%n"));
        s.append(estimateLine("Mean PPL(Q)                   : %10.6f ± %10.6f%n", k.ppl(), 1));
        s.append(estimateLine("Mean PPL(base)                : %10.6f ± %10.6f%n", k.basePpl(), 1));
        s.append(String.format(Locale.ROOT, "Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%%n", 100 * k.lnPplCorrelation()));
        s.append(estimateLine("Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f%n", k.lnPplRatio(), 1));
        s.append(estimateLine("Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f%n", k.pplRatio(), 1));
        s.append(estimateLine("Mean PPL(Q)-PPL(base)         : %10.6f ± %10.6f%n", k.pplDifference(), 1));

        s.append(String.format(Locale.ROOT, "%n====== KL divergence statistics ======%n"));
        s.append(estimateLine("Mean    KLD: %10.6f ± %10.6f%n", k.kld(), 1));
        KlDivergence.Distribution kld = k.kldDistribution();
        s.append(String.format(Locale.ROOT, "Maximum KLD: %10.6f%n", kld.max()));
        for (double f : KLD_PERCENTILES) {
            if (f == 0.5) {
                s.append(String.format(Locale.ROOT, "Median  KLD: %10.6f%n", kld.median()));
            } else {
                s.append(String.format(Locale.ROOT, "%s   KLD: %10.6f%n", percentLabel(f), kld.percentile(f)));
            }
        }
        s.append(String.format(Locale.ROOT, "Minimum KLD: %10.6f%n", kld.min()));

        s.append(String.format(Locale.ROOT, "%n====== Token probability statistics ======%n"));
        s.append(estimateLine("Mean    Δp: %6.3f ± %5.3f %%%n", k.deltaP(), 100));
        KlDivergence.Distribution dp = k.deltaPDistribution();
        s.append(String.format(Locale.ROOT, "Maximum Δp: %6.3f%%%n", 100 * dp.max()));
        for (double f : DELTA_P_PERCENTILES) {
            if (f == 0.5) {
                s.append(String.format(Locale.ROOT, "Median  Δp: %6.3f%%%n", 100 * dp.median()));
            } else {
                s.append(String.format(Locale.ROOT, "%s   Δp: %6.3f%%%n", percentLabel(f), 100 * dp.percentile(f)));
            }
        }
        s.append(String.format(Locale.ROOT, "Minimum Δp: %6.3f%%%n", 100 * dp.min()));
        s.append(estimateLine("RMS Δp    : %6.3f ± %5.3f %%%n", k.deltaPRms(), 100));
        s.append(estimateLine("Same top p: %6.3f ± %5.3f %%%n", k.sameTop(), 100));
        return s.toString();
    }

    /** The percentiles llama-perplexity prints between the maximum and the minimum, 0.5 being the median. */
    private static final double[] KLD_PERCENTILES = {0.999, 0.99, 0.95, 0.90, 0.5, 0.10, 0.05, 0.01, 0.001};
    private static final double[] DELTA_P_PERCENTILES =
            {0.999, 0.99, 0.95, 0.90, 0.75, 0.5, 0.25, 0.10, 0.05, 0.01, 0.001};

    private static String estimateLine(String format, Estimate e, double scale) {
        return String.format(Locale.ROOT, format, scale * e.value(), scale * e.uncertainty());
    }

    /** "99.9%", " 1.0%": the label llama-perplexity gives a percentile. */
    private static String percentLabel(double fraction) {
        return String.format(Locale.ROOT, "%4.1f%%", 100 * fraction);
    }

    /** The JSON key of a percentile: p99_9, p90, p0_1. */
    private static String percentKey(double fraction) {
        String percent = String.format(Locale.ROOT, "%.1f", 100 * fraction).replace(".0", "").replace('.', '_');
        return fraction == 0.5 ? "median" : "p" + percent;
    }

    private String json(LoadedModel<SingleSequence> model, LoadedModel<SingleSequence> baseModel, Windows windows,
                        Perplexity perplexity, KlDivergence kl) {
        ObjectNode root = new ObjectMapper().createObjectNode();
        root.put("model", model.source().path().toString());
        root.put("text", textFile.toString());
        root.put("context", windows.context());
        root.put("windows", windows.count());
        root.put("tokens_scored", perplexity.count());
        put(root.putObject("ppl"), perplexity.estimate());
        if (kl != null) {
            KlDivergence.Summary k = kl.summary();
            ObjectNode o = root.putObject("kl_divergence");
            o.put("base", baseModel.source().path().toString());
            put(o.putObject("ppl"), k.ppl());
            put(o.putObject("base_ppl"), k.basePpl());
            putNumber(o, "ln_ppl_correlation", k.lnPplCorrelation());
            put(o.putObject("ln_ppl_ratio"), k.lnPplRatio());
            put(o.putObject("ppl_ratio"), k.pplRatio());
            put(o.putObject("ppl_difference"), k.pplDifference());
            ObjectNode kld = o.putObject("kld");
            putMean(kld, k.kld());
            putDistribution(kld, k.kldDistribution(), KLD_PERCENTILES);
            ObjectNode dp = o.putObject("delta_p");
            putMean(dp, k.deltaP());
            putDistribution(dp, k.deltaPDistribution(), DELTA_P_PERCENTILES);
            put(dp.putObject("rms"), k.deltaPRms());
            put(o.putObject("same_top_p"), k.sameTop());
        }
        return root.toPrettyString() + System.lineSeparator();
    }

    private static void put(ObjectNode node, Estimate e) {
        putNumber(node, "value", e.value());
        putNumber(node, "uncertainty", e.uncertainty());
    }

    private static void putMean(ObjectNode node, Estimate e) {
        putNumber(node, "mean", e.value());
        putNumber(node, "uncertainty", e.uncertainty());
    }

    private static void putDistribution(ObjectNode node, KlDivergence.Distribution d, double[] percentiles) {
        putNumber(node, "max", d.max());
        for (double f : percentiles) putNumber(node, percentKey(f), f == 0.5 ? d.median() : d.percentile(f));
        putNumber(node, "min", d.min());
    }

    /** JSON has no NaN or infinity: such a figure (a correlation of values with no spread) is null. */
    private static void putNumber(ObjectNode node, String key, double value) {
        if (Double.isFinite(value)) {
            node.put(key, value);
        } else {
            node.putNull(key);
        }
    }
}
