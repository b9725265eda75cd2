package fs.cli;

import fs.FsException;
import fs.engine.LoadedModel;
import fs.eval.WindowProgress;
import fs.model.SingleSequence;
import fs.progress.Terminal;
import fs.quantize.ImportanceMatrix;
import fs.quantize.ImportanceMatrixCollector;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

// The bundle gives -c the window's description here (a shared option has one description, a context length's).
@Command(name = "imatrix", mixinStandardHelpOptions = true, resourceBundle = "fs.cli.WindowedCommands",
        description = "Computes an importance matrix over a text, as llama-imatrix does (the mean squared activation "
                + "of each input column of every matrix of the layers, over windows of -c tokens), in llama.cpp's "
                + "GGUF layout, for fs quantize --imatrix or llama-quantize --imatrix.")
final class ImatrixCommand implements Callable<Integer> {
    /** llama-imatrix's default window (its -c). */
    static final int DEFAULT_WINDOW = 512;

    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = {"-f", "--file"}, paramLabel = "TEXT", required = true,
            description = "The text, UTF-8, cut into windows of -c tokens (here 512 unless -c is given, as in "
                    + "llama-imatrix; a last partial window is left out; required).")
    Path text;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", defaultValue = "imatrix.gguf",
            description = "The file to write (default: ${DEFAULT-VALUE}; replaced only once complete).")
    Path output;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        String content = readText();
        Path directory = output.toAbsolutePath().getParent();
        if (Files.isDirectory(output) || !Files.isDirectory(directory)) {
            throw new FsException("-o " + output + ": " + (Files.isDirectory(output) ? "is a directory"
                    : "no directory " + directory) + "; the importance matrix would have nowhere to go");
        }
        if (modelOptions.ctx == null) modelOptions.ctx = DEFAULT_WINDOW; // -c is the window: the cache holds one
        int window = modelOptions.ctx;
        try (LoadedModel<SingleSequence> loaded = modelOptions.load(
                context -> SingleSequence.Shape.forGeneration(context, ModelOptions.PREFILL_BATCH), err)) {
            SingleSequence model = loaded.state();
            int[] tokens = loaded.source().tokenizer().encode(content);
            int windows = tokens.length / window;
            if (windows == 0) {
                throw new FsException("-f " + text + ": " + tokens.length + " tokens, fewer than one window of -c "
                        + window);
            }
            err.printf(Locale.ROOT, "fs: %d tokens of %s: %d windows of %d%n", tokens.length, text, windows, window);
            ImportanceMatrixCollector collector = new ImportanceMatrixCollector(model.config());
            WindowProgress progress = new WindowProgress(err, "imatrix", Terminal.stderrIsTerminal(), windows);
            long start = System.nanoTime();
            try {
                for (int w = 0; w < windows; w++) {
                    // each window starts a fresh context at position 0, as llama-imatrix clears its cache per chunk
                    int[] slice = Arrays.copyOfRange(tokens, w * window, (w + 1) * window);
                    model.forwardInBatches(slice, 0, collector, SingleSequence.BatchListener.NONE);
                    collector.endWindow();
                    ModelFileChangedException.checkUnchanged(loaded.source());
                    progress.windowDone(String.format(Locale.ROOT, "%.1f tokens/s",
                            (w + 1) * (double) window / ((System.nanoTime() - start) / 1e9)));
                }
            } finally {
                progress.end();
            }
            ImportanceMatrix matrix = collector.matrix(List.of(text.toString()), window);
            matrix.write(output);
            err.printf(Locale.ROOT, "fs: wrote %s: %d matrices over %d windows of %d tokens (%.1f s)%n", output,
                    matrix.tensors().size(), windows, window, (System.nanoTime() - start) / 1e9);
            err.flush();
        }
        return 0;
    }

    private String readText() {
        try {
            return TokenizeCommand.readUtf8(Files.readAllBytes(text), text.toString());
        } catch (NoSuchFileException e) {
            throw new FsException("-f " + text + ": no such file");
        } catch (IOException e) {
            throw new FsException("-f " + text + ": cannot read: " + e.getMessage(), e);
        }
    }
}
