package fs.embed;

import fs.FsException;
import fs.model.ModelWeights;
import fs.model.Pooling;
import fs.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalInt;

/**
 * Relevance scores as Qwen3-Reranker's model card computes them: each document is judged in the card's prompt (a
 * system line, {@code <Instruct>: …\n<Query>: …\n<Document>: …} as the user's turn, the assistant's turn opened
 * with an empty think block), and its score is P("yes") = softmax over the "no" and "yes" logits at the last
 * position: of the full logits for a causal LM (Qwen3-Reranker as it ships), of the two logits of its classifier
 * head for llama.cpp's reranker GGUF ({@link ModelWeights#RERANK_HEAD}: the same two rows of the lm_head, computed the
 * same way). Documents run batched ({@link SequenceBatcher}).
 */
public final class Reranker {
    /** The model card's default instruction. */
    public static final String DEFAULT_INSTRUCTION =
            "Given a web search query, retrieve relevant passages that answer the query";
    static final String PREFIX = "<|im_start|>system\nJudge whether the Document meets the requirements based on the"
            + " Query and the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n"
            + "<|im_start|>user\n";
    static final String SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";

    /** A document's score and its index among the documents given. */
    public record Score(int index, double relevance) {}

    private final Tokenizer tokenizer;
    private final int yes;
    private final int no;
    private final int[] prefix;
    private final int[] suffix;

    public Reranker(Tokenizer tokenizer) {
        this.tokenizer = tokenizer;
        this.yes = id(tokenizer, "yes");
        this.no = id(tokenizer, "no");
        this.prefix = tokenizer.encode(PREFIX);
        this.suffix = tokenizer.encode(SUFFIX);
    }

    private static int id(Tokenizer tokenizer, String token) {
        return tokenizer.tokenId(token).orElseThrow(
                () -> new FsException("the model's vocabulary has no token \"" + token + "\" to score with"));
    }

    /**
     * Refuses, in one line, a model that cannot score: an embedding model (it has no logits to read "yes" and "no"
     * from). A causal LM scores with its logits, as the model card runs Qwen3-Reranker; llama.cpp's reranker GGUF
     * (pooling rank) with its classifier head, whose presence opening the file checked.
     */
    public static void check(String model, Pooling pooling, boolean hasOutputProjection) {
        if (pooling == Pooling.RANK) return;
        if (pooling == Pooling.LAST || !hasOutputProjection) {
            throw new FsException(model + " is an embedding model: use fs embed (a reranker is a causal LM, such as"
                    + " Qwen3-Reranker)");
        }
        if (pooling != Pooling.NONE) {
            throw new FsException(model + " pools with " + pooling + "; fs reranks with a causal LM's yes/no logits");
        }
    }

    /**
     * The prompt's tokens for document {@code index}: the card's prefix, instruction, query and document, suffix,
     * each part tokenized on its own as the card does. One longer than {@code contextLength} is an FsException naming
     * the document, or with {@code truncate} loses the end of its document.
     */
    public int[] tokens(String instruction, String query, String document, int contextLength, boolean truncate,
                        int index) {
        int[] middle = tokenizer.encode("<Instruct>: " + instruction + "\n<Query>: " + query + "\n<Document>: "
                + document);
        int room = contextLength - prefix.length - suffix.length;
        if (middle.length > room) {
            if (!truncate || room < 1) {
                throw new FsException("document " + index + " makes a prompt of " + (prefix.length + middle.length
                        + suffix.length) + " tokens, more than the context of " + contextLength
                        + " (raise the context length, or truncate)");
            }
            middle = Arrays.copyOf(middle, room); // the card truncates the pair's end: the document's
        }
        int[] ids = Arrays.copyOf(prefix, prefix.length + middle.length + suffix.length);
        System.arraycopy(middle, 0, ids, prefix.length, middle.length);
        System.arraycopy(suffix, 0, ids, prefix.length + middle.length, suffix.length);
        return ids;
    }

    /** Each document's prompt ({@link #tokens}), in order; an empty query or no document is an FsException. */
    public int[][] prompts(String instruction, String query, List<String> documents, int contextLength,
                           boolean truncate) {
        if (query.isEmpty()) throw new FsException("the query is empty");
        if (documents.isEmpty()) throw new FsException("no document to rank");
        int[][] prompts = new int[documents.size()][];
        for (int i = 0; i < prompts.length; i++) {
            prompts[i] = tokens(instruction, query, documents.get(i), contextLength, truncate, i);
        }
        return prompts;
    }

    /**
     * P(yes) at the last position of each prompt, run on {@code batcher}, in order: from the model's classifier head
     * when it has one, else from its logits.
     */
    public double[] scores(SequenceBatcher batcher, int[][] prompts) {
        double[] scores = new double[prompts.length];
        if (batcher.model().hasRerankHead()) {
            float[] yesNo = new float[2];
            batcher.run(prompts, SequenceBatcher.Output.RERANK_LOGITS, (index, buffers, row) -> {
                buffers.readRerankLogits(row, yesNo);
                scores[index] = yesProbability(yesNo[0], yesNo[1]);
            });
            return scores;
        }
        float[] logits = new float[batcher.model().config().vocabSize()];
        batcher.run(prompts, SequenceBatcher.Output.LOGITS, (index, buffers, row) -> {
            buffers.readLogits(row, logits);
            scores[index] = yesProbability(logits[yes], logits[no]);
        });
        return scores;
    }

    /** softmax([no, yes])[yes], computed in double without overflow. */
    static double yesProbability(float yesLogit, float noLogit) {
        return 1 / (1 + Math.exp((double) noLogit - yesLogit));
    }

    /** The scores, highest first (ties: the earlier document first), at most {@code topN} of them (0: all). */
    public static List<Score> ranked(double[] scores, int topN) {
        List<Score> all = new ArrayList<>();
        for (int i = 0; i < scores.length; i++) all.add(new Score(i, scores[i]));
        all.sort(Comparator.comparingDouble(Score::relevance).reversed());
        return topN > 0 && topN < all.size() ? List.copyOf(all.subList(0, topN)) : List.copyOf(all);
    }
}
