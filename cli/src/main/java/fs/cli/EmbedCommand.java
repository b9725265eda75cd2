package fs.cli;

import fs.FsException;
import fs.embed.Embeddings;
import fs.embed.SequenceBatcher;
import fs.engine.LoadedModel;
import fs.server.EmbeddingsResponse;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "embed", mixinStandardHelpOptions = true,
        description = "Prints the embedding of each text, one line of floats each (an embedding model: Qwen3-Embedding;"
                + " the last token's final hidden state, L2-normalized).")
final class EmbedCommand implements Callable<Integer> {
    /**
     * Inputs run at once, each in its own slot of the KV cache, their tokens packed into forwards of
     * {@link ModelOptions#PREFILL_BATCH} rows.
     */
    static final int SLOTS = 8;

    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Parameters(index = "1..*", paramLabel = "TEXT",
            description = "The texts to embed (no default: one of TEXT or -f is required).")
    List<String> texts = new ArrayList<>();

    @Option(names = {"-f", "--file"}, paramLabel = "FILE",
            description = "Reads the texts from FILE, UTF-8, one per line, blank lines skipped (one of TEXT or -f is "
                    + "required).")
    Path file;

    @Option(names = "--json", description = "Print OpenAI's embeddings response instead: {\"object\": \"list\", "
            + "\"data\": [{\"index\": i, \"embedding\": [...]}], \"usage\": {...}}.")
    boolean json;

    @Option(names = "--dimensions", paramLabel = "N",
            description = "Keep the first N dimensions, normalized again (Matryoshka, as the model card allows; "
                    + "default: all of them).")
    Integer dimensions;

    @Option(names = "--instruct", paramLabel = "TASK",
            description = "Embed the texts as queries in the model card's form: \"Instruct: TASK\\nQuery:TEXT\" (e.g. "
                    + "\"" + Embeddings.DEFAULT_TASK + "\"); default: none, as for documents.")
    String task;

    @Option(names = "--truncate", description = "Keep the first tokens of an input longer than the context rather "
            + "than failing.")
    boolean truncate;

    @Override
    public Integer call() throws IOException {
        PrintWriter err = spec.commandLine().getErr();
        List<String> inputs = inputs();
        if (dimensions != null && dimensions < 1) {
            throw new ParameterException(spec.commandLine(), "--dimensions must be at least 1, got " + dimensions);
        }
        Embeddings.Options options = new Embeddings.Options(dimensions == null ? 0 : dimensions, true, truncate);
        Prepared prepared = new Prepared();
        List<float[]> vectors;
        try (LoadedModel<SequenceBatcher> loaded = modelOptions.loadWith(source -> {
            usage(() -> Embeddings.check(source.path().toString(), source.pooling()));
            int hidden = source.config().hiddenSize();
            if (dimensions != null && dimensions > hidden) {
                throw new ParameterException(spec.commandLine(), "--dimensions " + dimensions
                        + " is more than the model's " + hidden);
            }
            Tokenizer tokenizer = source.tokenizer();
            prepared.embeddings = new Embeddings(tokenizer, source.appendedToken(tokenizer));
            for (String text : inputs) prepared.ids.add(prepared.embeddings.tokens(text));
        }, context -> {
            int[][] fitted = usage(() -> prepared.embeddings.fitted(prepared.ids, context, truncate));
            prepared.ids.clear();
            prepared.ids.addAll(List.of(fitted));
            int longest = 0;
            for (int[] ids : fitted) longest = Math.max(longest, ids.length);
            int cacheLength = longest; // a cache only as long as the longest input: 8 slots at the full context are big
            return (model, cacheTypes) -> new SequenceBatcher(model, Math.min(SLOTS, fitted.length), cacheLength,
                    ModelOptions.PREFILL_BATCH, cacheTypes);
        }, err)) {
            vectors = usage(() -> prepared.embeddings.embed(loaded.state(), prepared.ids, options));
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) out.println(openAiResponse(vectors, prepared.ids, modelOptions.model()));
        else for (float[] vector : vectors) out.println(spaced(vector));
        out.flush();
        return 0;
    }

    /** What the forward needs of the source, found before the weights are uploaded. */
    private static final class Prepared {
        Embeddings embeddings;
        final List<int[]> ids = new ArrayList<>();
    }

    /** The texts of TEXT or -f, as queries with --instruct. */
    private List<String> inputs() throws IOException {
        if (file != null && !texts.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "TEXT and -f are exclusive: give the texts one way");
        }
        List<String> found = new ArrayList<>(texts);
        if (file != null) {
            try {
                for (String line : Files.readAllLines(file)) if (!line.isBlank()) found.add(line);
            } catch (NoSuchFileException e) {
                throw new FsException("-f " + file + ": no such file");
            }
            if (found.isEmpty()) throw new ParameterException(spec.commandLine(), "-f " + file + " has no text");
        }
        if (found.isEmpty()) throw new ParameterException(spec.commandLine(), "no input: give TEXT… or -f FILE");
        for (int i = 0; i < found.size(); i++) {
            if (found.get(i).isEmpty()) throw new ParameterException(spec.commandLine(), "text " + i + " is empty");
        }
        if (task != null) found.replaceAll(text -> Embeddings.query(task, text));
        return found;
    }

    /** What the user asked that the model cannot do (an input too long, not an embedding model) is a usage error. */
    private <T> T usage(Supplier<T> step) {
        try {
            return step.get();
        } catch (FsException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private void usage(Runnable step) {
        usage(() -> {
            step.run();
            return null;
        });
    }

    private static String spaced(float[] vector) {
        StringBuilder line = new StringBuilder();
        for (float v : vector) {
            if (!line.isEmpty()) line.append(' ');
            line.append(v);
        }
        return line.toString();
    }

    /** OpenAI's embeddings response: the vectors in order, the model as named, the tokens run. */
    static String openAiResponse(List<float[]> vectors, List<int[]> ids, String model) {
        return EmbeddingsResponse.of(vectors, ids, model, false).toString();
    }
}
