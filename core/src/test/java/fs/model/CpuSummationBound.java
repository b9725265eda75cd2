package fs.model;

import jdk.incubator.vector.FloatVector;

/**
 * How far a batched forward's logits may be from one row's on the Vector API backend, at this machine's vector width.
 *
 * <p>One row (decode) sums each matmul output in L lanes of K/L terms and a tree of log2 L levels; a batch (prefill)
 * in one sequential chain of K terms, whatever L (see MatmulKernels). A dot product summed to depth d is off by at
 * most γ_d ≈ d·u of its terms' magnitudes (u = 2⁻²⁴), so two orders differ by up to D·u with D = K + K/L + log2 L,
 * K the checkpoint's longest dot product. With fewer lanes one row's chains are longer: D grows from 140 at 16 lanes
 * to 162 at 4 for K = 128. A logit carries the differences of every matmul before it, in the scale of the hidden
 * state rather than its own size. Measured on the four tiny checkpoints at 16, 8 and 4 lanes (-XX:UseAVX=2,
 * -XX:MaxVectorSize=16): at most 25·D·u for logits under 16 and 27·D·u for any, so D·u·(64 + |logit|) leaves a
 * margin of 2.5 at every width. A batching bug (a wrong row, position or mask) moves logits by 1e-2 and more.
 */
final class CpuSummationBound {
    private static final double UNIT_ROUNDOFF = Math.scalb(1.0, -24);
    private static final int LANES = FloatVector.SPECIES_PREFERRED.length();

    private CpuSummationBound() {}

    static double batchingTolerance(ModelConfig config, float logit) {
        int k = Math.max(config.hiddenSize(), Math.max(config.largestFeedForwardWidth(), config.queryDim()));
        double depth = k + (double) k / LANES + Integer.numberOfTrailingZeros(LANES);
        return depth * UNIT_ROUNDOFF * (64 + Math.abs(logit));
    }
}
