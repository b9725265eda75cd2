package fs.model;

import java.util.Locale;
import java.util.Optional;

/**
 * How a model turns its hidden states into one vector per input, as llama.cpp's {@code {arch}.pooling_type} numbers
 * them (LLAMA_POOLING_TYPE_*): {@link #NONE} for a causal language model, {@link #LAST} for Qwen3-Embedding (the
 * final-normed hidden state of the last token), {@link #RANK} for a reranker GGUF. fs embeds with LAST only and
 * scores with RANK, or with the "yes"/"no" logits of a causal LM (Qwen3-Reranker ships as one).
 */
public enum Pooling {
    NONE, MEAN, CLS, LAST, RANK;

    /** The pooling llama.cpp numbers {@code id}, if it is one. */
    public static Optional<Pooling> ofLlamaCpp(long id) {
        return id >= 0 && id < values().length ? Optional.of(values()[(int) id]) : Optional.empty();
    }

    /** The name users of llama.cpp know: "none", "mean", "cls", "last", "rank". */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
