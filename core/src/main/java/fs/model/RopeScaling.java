package fs.model;

import fs.backend.Rope;

/**
 * config.json's rope_scaling (rope_parameters in transformers 5): plain RoPE or YaRN, each making the {@link Rope} the
 * backends apply, as Hugging Face's rope init functions compute it (here in double).
 */
public sealed interface RopeScaling {

    /** The rope of a head of {@code headDim} (even) dims with base {@code theta}. */
    Rope rope(int headDim, double theta);

    /** No scaling: rope_scaling null, absent, empty or of type "default". */
    record Plain() implements RopeScaling {
        @Override
        public Rope rope(int headDim, double theta) {
            return Rope.plain(headDim, theta);
        }
    }

    /**
     * YaRN (arXiv 2309.00071) as transformers' {@code _compute_yarn_parameters}: pairs that turn fewer than
     * {@code betaSlow} times over {@code originalMaxPositionEmbeddings} positions are interpolated (their frequency
     * divided by {@code factor}), pairs that turn more than {@code betaFast} times keep theirs, and a linear ramp over
     * the dims between blends the two; {@code truncate} rounds the ramp's ends outward to whole dims first. cos and
     * sin are multiplied by {@code attentionFactor}. Every value here is resolved: defaults applied, the attention
     * factor computed (see {@link #defaultAttentionFactor}).
     */
    record Yarn(double factor, int originalMaxPositionEmbeddings, double betaFast, double betaSlow,
            double attentionFactor, boolean truncate) implements RopeScaling {

        /** transformers' defaults for beta_fast and beta_slow. */
        public static final double DEFAULT_BETA_FAST = 32;
        public static final double DEFAULT_BETA_SLOW = 1;

        /**
         * The attention factor when config.json gives none: 0.1·ln(factor)·mscale + 1 over the same with mscale_all_dim
         * when both are set and non-zero (DeepSeek's form), else 0.1·ln(factor) + 1; 1 for a factor of at most 1.
         */
        public static double defaultAttentionFactor(double factor, double mscale, double mscaleAllDim) {
            if (mscale != 0 && mscaleAllDim != 0) return magnitude(factor, mscale) / magnitude(factor, mscaleAllDim);
            return magnitude(factor, 1);
        }

        private static double magnitude(double factor, double mscale) {
            return factor <= 1 ? 1 : 0.1 * mscale * Math.log(factor) + 1;
        }

        @Override
        public Rope rope(int headDim, double theta) {
            double low = correctionDim(betaFast, headDim, theta);
            double high = correctionDim(betaSlow, headDim, theta);
            if (truncate) {
                low = Math.floor(low);
                high = Math.ceil(high);
            }
            low = Math.max(low, 0);
            high = Math.min(high, headDim - 1);
            if (low == high) high += 0.001; // transformers' guard against a ramp of zero width
            double[] inverse = new double[headDim / 2];
            for (int i = 0; i < inverse.length; i++) {
                double positionsPerRadian = Math.pow(theta, 2.0 * i / headDim);
                double extrapolated = 1 / positionsPerRadian;
                double interpolated = 1 / (factor * positionsPerRadian);
                double kept = 1 - Math.clamp((i - low) / (high - low), 0.0, 1.0);
                inverse[i] = interpolated * (1 - kept) + extrapolated * kept;
            }
            return new Rope(inverse, attentionFactor);
        }

        /** The (fractional) pair index whose dim turns {@code rotations} times over the original context. */
        private double correctionDim(double rotations, int headDim, double theta) {
            return headDim * Math.log(originalMaxPositionEmbeddings / (rotations * 2 * Math.PI)) / (2 * Math.log(theta));
        }
    }
}
