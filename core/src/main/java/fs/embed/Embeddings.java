package fs.embed;

import fs.FsException;
import fs.model.Pooling;
import fs.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;

/**
 * Embeddings as Qwen3-Embedding's model card computes them: each input's tokens (a text's, with the token the model's
 * tokenizer appends, {@code <|endoftext|>}; token ids as given) run through the model, the final-normed hidden state
 * of the last token, L2-normalized; with {@code dimensions}, its first that many entries, normalized again
 * (Matryoshka). Queries may carry the card's instruction ({@link #query}); documents go as they are.
 */
public final class Embeddings {
    /** The model card's default task for queries. */
    public static final String DEFAULT_TASK =
            "Given a web search query, retrieve relevant passages that answer the query";

    /**
     * @param dimensions the entries kept (1..hidden size), or 0 for all
     * @param normalize  whether the vectors are L2-normalized (the model card's, and OpenAI's, default)
     * @param truncate   whether an input longer than the context keeps its first tokens (and a text the token its
     *                   tokenizer appends) rather than being an error
     */
    public record Options(int dimensions, boolean normalize, boolean truncate) {
        public static final Options DEFAULT = new Options(0, true, false);

        public Options {
            if (dimensions < 0) throw new FsException("dimensions must be positive, got " + dimensions);
        }
    }

    private final Tokenizer tokenizer;
    private final OptionalInt appended;

    /** @param appended the token the model's tokenizer appends to a text ({@code ModelSource.appendedToken}) */
    public Embeddings(Tokenizer tokenizer, OptionalInt appended) {
        this.tokenizer = tokenizer;
        this.appended = appended;
    }

    /**
     * Refuses, in one line, a model that is not an embedding model: fs embeds with last-token pooling, which a GGUF's
     * {@code pooling_type} (llama.cpp's rule) or, for a checkpoint, sentence-transformers' {@code 1_Pooling} config
     * or a bare Qwen3Model without lm_head says (see {@link Pooling}).
     */
    public static void check(String model, Pooling pooling) {
        switch (pooling) {
            case LAST -> {}
            case NONE -> throw new FsException(model + " is not an embedding model (no last-token pooling: a GGUF"
                    + " without pooling_type, a checkpoint with lm_head and without 1_Pooling/config.json)");
            case RANK -> throw new FsException(model + " is a reranker (pooling_type rank), not an embedding model");
            default -> throw new FsException(model + " pools with " + pooling + "; fs embeds with last-token pooling"
                    + " only");
        }
    }

    /** The model card's query form: {@code Instruct: {task}\nQuery:{query}}. */
    public static String query(String task, String query) {
        return "Instruct: " + task + "\nQuery:" + query;
    }

    /** A text's tokens as the model's tokenizer makes them for embedding: with the appended token, if any. */
    public int[] tokens(String text) {
        int[] ids = tokenizer.encode(text);
        if (appended.isEmpty()) return ids;
        int[] withEnd = Arrays.copyOf(ids, ids.length + 1);
        withEnd[ids.length] = appended.getAsInt();
        return withEnd;
    }

    /**
     * The inputs as they run in a context of {@code contextLength} positions: an empty input, or one longer than the
     * context unless {@code truncate}, is an FsException naming it (input 0 is the first); a truncated one keeps its
     * first tokens, and a text the token its tokenizer ends it with.
     */
    public int[][] fitted(List<int[]> inputs, int contextLength, boolean truncate) {
        if (inputs.isEmpty()) throw new FsException("no input to embed");
        int[][] sequences = new int[inputs.size()][];
        for (int i = 0; i < sequences.length; i++) sequences[i] = fitted(i, inputs.get(i), contextLength, truncate);
        return sequences;
    }

    /**
     * One vector per input, in order, each run on {@code batcher} ({@link #fitted} first: the inputs as they fit its
     * context).
     */
    public List<float[]> embed(SequenceBatcher batcher, List<int[]> inputs, Options options) {
        int hidden = batcher.model().config().hiddenSize();
        if (options.dimensions() > hidden) {
            throw new FsException("dimensions " + options.dimensions() + " is more than the model's " + hidden);
        }
        int[][] sequences = fitted(inputs, batcher.contextLength(), options.truncate());
        float[][] vectors = new float[sequences.length][];
        float[] row = new float[hidden];
        int kept = options.dimensions() == 0 ? hidden : options.dimensions();
        batcher.run(sequences, SequenceBatcher.Output.HIDDEN, (index, buffers, r) -> {
            buffers.readHidden(r, row);
            float[] vector = Arrays.copyOf(row, kept);
            if (options.normalize()) normalize(vector);
            vectors[index] = vector;
        });
        return List.of(vectors);
    }

    private int[] fitted(int index, int[] ids, int contextLength, boolean truncate) {
        if (ids.length == 0) throw new FsException("input " + index + " is empty");
        if (ids.length <= contextLength) return ids;
        if (!truncate) {
            throw new FsException("input " + index + " has " + ids.length + " tokens, more than the context of "
                    + contextLength + " (raise the context length, or truncate)");
        }
        int[] kept = Arrays.copyOf(ids, contextLength);
        // a text keeps the token its tokenizer ends it with: the model was trained to pool at that token
        int last = ids[ids.length - 1];
        if (appended.isPresent() && last == appended.getAsInt()) kept[kept.length - 1] = last;
        return kept;
    }

    /** Divides by the L2 norm, summed in double (a zero vector stays zero). */
    static void normalize(float[] vector) {
        double sum = 0;
        for (float v : vector) sum += (double) v * v;
        if (sum == 0) return;
        double scale = 1 / Math.sqrt(sum);
        for (int i = 0; i < vector.length; i++) vector[i] = (float) (vector[i] * scale);
    }

    /** Cosine similarity of two vectors (their dot product when both are normalized). */
    public static double cosine(float[] a, float[] b) {
        double dot = 0, na = 0, nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }

    /** Each text's tokens ({@link #tokens(String)}), in order. */
    public List<int[]> tokens(List<String> texts) {
        List<int[]> ids = new ArrayList<>();
        for (String text : texts) ids.add(tokens(text));
        return ids;
    }
}
