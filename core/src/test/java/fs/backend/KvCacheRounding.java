package fs.backend;

/**
 * What storing keys and values in a {@link KvCacheType} may do to attention, as a bound on each output element, and
 * the float64 attention it bounds the distance to (over the float32 keys and values, before any rounding).
 *
 * <p>The derivation. Each stored element x comes back as x + δ with |δ| ≤ {@link #elementBound}: 0 for f32; for f16
 * |x|·2⁻¹¹ (round to nearest, 11 significant bits) + 2⁻²⁵ (half the smallest subnormal); for bf16 |x|·2⁻⁸; for q8_0,
 * per block of 32, x ≈ q·d₁₆ with d = amax/127 rounded to f16 as d₁₆ and q = round(x/d), so |δ| ≤ d/2 + 127·|d − d₁₆|
 * ≤ d·(1/2 + 127·2⁻¹¹). A score s_p = scale·q·k_p then moves by at most Δs = scale·max_p Σ_i |q_i|·δk_{p,i}; the
 * softmax weights w_p ∝ e^{s_p} by a factor within e^{±2Δs}, so Σ_p |w'_p − w_p| ≤ e^{2Δs} − 1; and output element e,
 * Σ_p w_p v_{p,e}, moves by at most (e^{2Δs} − 1)·max_p |v_{p,e}| + max_p δv_{p,e}. On top, float32 arithmetic and the
 * kernels' exponential: {@link #ARITHMETIC} of max_p |v_{p,e}|, which the f32 cache must meet by itself.
 */
final class KvCacheRounding {
    /** The float32 arithmetic's share of the bound, relative to the largest value the output weighs. */
    static final double ARITHMETIC = 1e-5;

    private KvCacheRounding() {}

    /** The bound on |δ| of each of the {@code length} elements of one head's row stored as {@code type}. */
    static double[] elementBound(KvCacheType type, float[] x, int at, int length) {
        double[] bound = new double[length];
        for (int i = 0; i < length; i++) {
            double a = Math.abs(x[at + i]);
            bound[i] = switch (type) {
                case F32 -> 0;
                case F16 -> a * 0x1p-11 + 0x1p-25;
                case BF16 -> a * 0x1p-8;
                case Q8_0 -> 0; // per block, below
            };
        }
        if (type == KvCacheType.Q8_0) {
            for (int b = 0; b < length; b += 32) {
                double amax = 0;
                for (int i = b; i < b + 32; i++) amax = Math.max(amax, Math.abs(x[at + i]));
                double d = amax / 127;
                for (int i = b; i < b + 32; i++) bound[i] = d * (0.5 + 0x1p-20 + 127 * 0x1p-11); // 2⁻²⁰: x·(1/d) ≠ x/d
            }
        }
        return bound;
    }

    /**
     * Float64 attention of the query at q[qAt..] over positions 0..positions-1 of rows at keys[p·stride + kAt..] and
     * values[p·stride + kAt..]: the softmax of scale·q·k weighing the values.
     */
    static double[] attention(float[] q, int qAt, float[] keys, float[] values, int stride, int kAt, int positions,
                              int headDim) {
        double scale = 1 / Math.sqrt(headDim);
        double[] s = new double[positions];
        double max = Double.NEGATIVE_INFINITY;
        for (int p = 0; p < positions; p++) {
            double dot = 0;
            for (int i = 0; i < headDim; i++) dot += (double) q[qAt + i] * keys[p * stride + kAt + i];
            s[p] = scale * dot;
            max = Math.max(max, s[p]);
        }
        double sum = 0;
        for (int p = 0; p < positions; p++) sum += s[p] = Math.exp(s[p] - max);
        double[] out = new double[headDim];
        for (int p = 0; p < positions; p++) {
            for (int e = 0; e < headDim; e++) out[e] += s[p] / sum * values[p * stride + kAt + e];
        }
        return out;
    }

    /** The bound on each output element of {@link #attention}'s query when the cache stores {@code types}. */
    static double[] bound(KvCacheTypes types, float[] q, int qAt, float[] keys, float[] values, int stride, int kAt,
                          int positions, int headDim) {
        double scale = 1 / Math.sqrt(headDim), scoreShift = 0;
        double[] largest = new double[headDim], valueShift = new double[headDim];
        for (int p = 0; p < positions; p++) {
            double[] dk = elementBound(types.keys(), keys, p * stride + kAt, headDim);
            double[] dv = elementBound(types.values(), values, p * stride + kAt, headDim);
            double shift = 0;
            for (int i = 0; i < headDim; i++) shift += Math.abs(q[qAt + i]) * dk[i];
            scoreShift = Math.max(scoreShift, scale * shift);
            for (int e = 0; e < headDim; e++) {
                largest[e] = Math.max(largest[e], Math.abs(values[p * stride + kAt + e]));
                valueShift[e] = Math.max(valueShift[e], dv[e]);
            }
        }
        double weights = Math.expm1(2 * scoreShift);
        double[] bound = new double[headDim];
        for (int e = 0; e < headDim; e++) bound[e] = (weights + ARITHMETIC) * largest[e] + valueShift[e];
        return bound;
    }
}
