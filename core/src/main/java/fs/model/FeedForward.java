package fs.model;

/**
 * What a layer's feed-forward block is: a dense SwiGLU MLP, or a mixture of SwiGLU experts behind a router. One per
 * layer in {@link ModelConfig#feedForward}: Qwen3-MoE may keep some layers dense (Hugging Face's mlp_only_layers and
 * decoder_sparse_step).
 */
public sealed interface FeedForward {

    /** The width of the activations between the up and the down projection. */
    int width();

    /** {@code down(silu(gate(h)) * up(h))} with gate and up of {@code width} rows. */
    record Dense(int width) implements FeedForward {
        public Dense {
            if (width <= 0) throw new IllegalArgumentException("the feed-forward width must be positive, got " + width);
        }
    }

    /**
     * Hugging Face's Qwen3MoeSparseMoeBlock: softmax over the router's {@code count} logits, the {@code used} most
     * probable experts (renormalized to sum to one when {@code normalizeTopK}), each a SwiGLU of {@code width}, their
     * outputs weighted and summed. No shared expert.
     */
    record Experts(int count, int used, int width, boolean normalizeTopK) implements FeedForward {
        public Experts {
            if (count <= 0) throw new IllegalArgumentException("the expert count must be positive, got " + count);
            if (used <= 0 || used > count) {
                throw new IllegalArgumentException("the experts used per token (" + used + ") must be in 1.." + count
                        + " (the expert count)");
            }
            if (width <= 0) throw new IllegalArgumentException("the expert width must be positive, got " + width);
        }
    }
}
