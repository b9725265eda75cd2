package fs.model;

import java.util.Locale;

/**
 * How many weights a model has, from its config's shapes: {@code total} every weight once, as llama.cpp
 * (llama_model_n_params, the stored tensors) and Hugging Face (num_parameters, a tied output projection counted once
 * as the embedding) count them; {@code active} the weights one token's forward reads, which is all of them but the
 * experts its mixtures of experts did not choose ((count − used) experts' three matrices per sparse layer). The
 * embedding and the output projection count in both, as Qwen3-30B-A3B's "30.5B, 3.3B activated" does. For a dense
 * model the two are equal.
 */
public record ParameterCount(long total, long active) {

    public static ParameterCount of(ModelConfig config) {
        long hidden = config.hiddenSize();
        long head = config.headDim();
        long total = Math.multiplyExact(config.vocabSize(), hidden) * (config.tieWordEmbeddings() ? 1 : 2) + hidden;
        long unchosen = 0;
        long attention = 2 * hidden * config.queryDim() + 2 * hidden * config.kvDim() + 2 * head + 2 * hidden;
        for (FeedForward feedForward : config.feedForward()) {
            total = Math.addExact(total, attention);
            switch (feedForward) {
                case FeedForward.Dense dense -> total = Math.addExact(total, 3 * hidden * dense.width());
                case FeedForward.Experts experts -> {
                    long expert = 3 * hidden * experts.width();
                    total = Math.addExact(total, (long) experts.count() * hidden
                            + Math.multiplyExact((long) experts.count(), expert));
                    unchosen += (long) (experts.count() - experts.used()) * expert;
                }
            }
        }
        return new ParameterCount(total, total - unchosen);
    }

    /** Whether some weights sit out each token: a mixture of experts. */
    public boolean sparse() {
        return active < total;
    }

    /** "30.5B", "3.3B", "596M", "4.6K": one decimal below 100 of the unit, none above. */
    public static String label(long parameters) {
        String[] units = {"K", "M", "B", "T"};
        double value = parameters;
        int unit = -1;
        while (unit < units.length - 1 && value >= 1000) {
            value /= 1000;
            unit++;
        }
        if (unit < 0) return Long.toString(parameters);
        return String.format(Locale.ROOT, value >= 99.95 ? "%.0f%s" : "%.1f%s", value, units[unit]);
    }
}
