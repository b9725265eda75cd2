package fs.format;

import java.util.Arrays;

/**
 * The arithmetic llama.cpp's quantizers share: ggml-quants.c's scale searches (make_qx_quants, make_qkx2_quants, ...),
 * its roundings and f16 scales. Each search mirrors one C function operation for operation, in the same float32
 * order, so that the bytes come out the same: the searches compare sums of rounded products, and any reordering (or
 * an FMA) can flip a choice. (llama.cpp compiles ggml-quants.c into ggml-base without -march flags, so its floats are
 * plain SSE2 float32 with no fused multiply-adds, as Java's are.)
 *
 * <p>A group of {@code n} weights is {@code x[xAt, xAt + n)}; its quants go to {@code levels[at, at + n)}, as the
 * unsigned integers the block stores. All scratch is the caller's: nothing here allocates.
 */
final class QuantMath {
    /** ggml-quants.c's GROUP_MAX_EPS: a group whose largest magnitude is below this is all zero. */
    static final float GROUP_MAX_EPS = 1e-15f;

    private QuantMath() {}

    /**
     * ggml's nearest_int: adds 1.5·2^23, so that the float sum's rounding (to nearest, ties to even) leaves the
     * integer in the low mantissa bits. Reproduced bit for bit rather than as {@link Math#rint}, which agrees for
     * |v| ≤ 2^22 but not beyond, where ggml's trick wraps (a weight over a scale that underflowed f16 can get there).
     */
    static int nearestInt(float v) {
        int bits = Float.floatToRawIntBits(v + 12582912f);
        return (bits & 0x007FFFFF) - 0x00400000;
    }

    /** C's roundf: to nearest, ties away from zero (Math.round ties toward +∞); NaN and ±∞ stay as they are. */
    static float roundf(float v) {
        if (!(Math.abs(v) < 0x1p23f)) return v; // integral already, or not a number
        return Math.copySign((float) Math.floor(Math.abs((double) v) + 0.5), v); // exact in double
    }

    /**
     * C's conversion of a float to an integer type as x86 does it (cvttss2si, then the low bits): toward zero, and
     * 0x80000000 for NaN or beyond int's range, where Java's cast saturates. It matters where x / d is infinite:
     * Q8_0's and Q4_0's reference paths divide by a d whose inverse overflows for a block of weights below ~4e-37.
     */
    static int truncate(float v) {
        return Math.abs(v) < 0x1p31f ? (int) v : Integer.MIN_VALUE;
    }

    /** An f16 as ggml stores it (GGML_FP32_TO_FP16 rounds to nearest even, as {@link Float#floatToFloat16} does). */
    static short half(float v) {
        return Float.floatToFloat16(v);
    }

    /** The float an f16 scale reads back as: what the quantizers requantize against. */
    static float halfValue(short h) {
        return Float.float16ToFloat(h);
    }

    /** Stores an f16 little-endian at {@code block[at]}. */
    static void putHalf(byte[] block, int at, short h) {
        block[at] = (byte) h;
        block[at + 1] = (byte) (h >> 8);
    }

    /** Stores an int little-endian at {@code block[at]}. */
    static void putInt(byte[] block, int at, int v) {
        for (int k = 0; k < 4; k++) block[at + k] = (byte) (v >> 8 * k);
    }

    /**
     * Packs group {@code j}'s 6-bit scale {@code ls} and min {@code lm} into the 12 scale bytes of a Q4_K or Q5_K
     * block at {@code scales[at]} (layout: {@link ReferenceDequantizer}'s scaleAndMin), as quantize_row_q4_K does:
     * groups 0..3 are stored whole (any bits above 6 spill into the neighbours' top bits, as in C), groups 4..7 are
     * or-ed into their bytes after them, so call it for j = 0..7 in order.
     */
    static void packScaleMin(byte[] scales, int at, int j, int ls, int lm) {
        if (j < 4) {
            scales[at + j] = (byte) ls;
            scales[at + j + 4] = (byte) lm;
        } else {
            scales[at + j + 4] = (byte) (ls & 0xF | (lm & 0xF) << 4);
            scales[at + j - 4] |= (byte) ((ls >> 4) << 6);
            scales[at + j] |= (byte) ((lm >> 4) << 6);
        }
    }

    /** get_scale_min_k4: group {@code j}'s scale (low byte) and min (second byte) from the packed bytes. */
    static int scaleMin(byte[] scales, int at, int j) {
        int sc;
        int m;
        if (j < 4) {
            sc = scales[at + j] & 63;
            m = scales[at + j + 4] & 63;
        } else {
            sc = scales[at + j + 4] & 0xF | ((scales[at + j - 4] & 0xFF) >> 6) << 4;
            m = (scales[at + j + 4] & 0xFF) >> 4 | ((scales[at + j] & 0xFF) >> 6) << 4;
        }
        return sc | m << 8;
    }

    /** The value of largest magnitude among x[xAt..xAt+n), with its sign; the first of equal magnitudes. */
    private static float largestMagnitude(int n, float[] x, int xAt) {
        float max = 0;
        float amax = 0;
        for (int i = 0; i < n; i++) {
            float ax = Math.abs(x[xAt + i]);
            if (ax > amax) {
                amax = ax;
                max = x[xAt + i];
            }
        }
        return max;
    }

    /**
     * make_qx_quants with rmse_type 1: a symmetric scale for levels −nmax..nmax−1 (stored plus nmax), chosen among
     * 19 trial scales around nmax / max by weighted least squares; weights {@code qw[qwAt..]}, or x² when
     * {@code qw} is null. Returns the scale (negative when the largest magnitude is negative).
     */
    static float makeQxQuants(int n, int nmax, float[] x, int xAt, int[] levels, int at, float[] qw, int qwAt) {
        float max = largestMagnitude(n, x, xAt);
        if (Math.abs(max) < GROUP_MAX_EPS) {
            Arrays.fill(levels, at, at + n, 0);
            return 0f;
        }
        float iscale = -nmax / max;
        float sumlx = 0;
        float suml2 = 0;
        for (int i = 0; i < n; i++) {
            float xi = x[xAt + i];
            int l = Math.max(-nmax, Math.min(nmax - 1, nearestInt(iscale * xi)));
            levels[at + i] = l + nmax;
            float w = qw != null ? qw[qwAt + i] : xi * xi;
            sumlx += w * xi * l;
            suml2 += w * l * l;
        }
        float scale = suml2 != 0 ? sumlx / suml2 : 0f;
        float best = scale * sumlx;
        for (int is = -9; is <= 9; is++) {
            if (is == 0) continue;
            iscale = -(nmax + 0.1f * is) / max;
            sumlx = 0;
            suml2 = 0;
            for (int i = 0; i < n; i++) {
                float xi = x[xAt + i];
                int l = Math.max(-nmax, Math.min(nmax - 1, nearestInt(iscale * xi)));
                float w = qw != null ? qw[qwAt + i] : xi * xi;
                sumlx += w * xi * l;
                suml2 += w * l * l;
            }
            if (suml2 > 0 && sumlx * sumlx > best * suml2) {
                for (int i = 0; i < n; i++) {
                    levels[at + i] = nmax + Math.max(-nmax, Math.min(nmax - 1, nearestInt(iscale * x[xAt + i])));
                }
                scale = sumlx / suml2;
                best = scale * sumlx;
            }
        }
        return scale;
    }

    /**
     * make_q3_quants with do_rmse: Q3_K's symmetric search, levels −nmax..nmax−1 (stored plus nmax) refined one
     * weight at a time for up to 5 rounds, weighted by x². Returns the scale.
     */
    static float makeQ3Quants(int n, int nmax, float[] x, int xAt, int[] levels, int at) {
        float max = largestMagnitude(n, x, xAt);
        if (Math.abs(max) < GROUP_MAX_EPS) {
            Arrays.fill(levels, at, at + n, 0);
            return 0f;
        }
        float iscale = -nmax / max;
        float sumlx = 0;
        float suml2 = 0;
        for (int i = 0; i < n; i++) {
            float xi = x[xAt + i];
            int l = Math.max(-nmax, Math.min(nmax - 1, nearestInt(iscale * xi)));
            levels[at + i] = l;
            float w = xi * xi;
            sumlx += w * xi * l;
            suml2 += w * l * l;
        }
        for (int round = 0; round < 5; round++) {
            int changed = 0;
            for (int i = 0; i < n; i++) {
                float xi = x[xAt + i];
                int li = levels[at + i];
                float w = xi * xi;
                float slx = sumlx - w * xi * li;
                if (slx > 0) {
                    float sl2 = suml2 - w * li * li;
                    int newL = Math.max(-nmax, Math.min(nmax - 1, nearestInt(xi * sl2 / slx)));
                    if (newL != li) {
                        slx += w * xi * newL;
                        sl2 += w * newL * newL;
                        if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                            levels[at + i] = newL;
                            sumlx = slx;
                            suml2 = sl2;
                            changed++;
                        }
                    }
                }
            }
            if (changed == 0) break;
        }
        for (int i = 0; i < n; i++) levels[at + i] += nmax;
        return suml2 > 0f ? sumlx / suml2 : 0f;
    }

    /**
     * make_qkx2_quants, and make_qkx3_quants, which is the same search when given weights (it differs only in
     * defaulting them to x²; every caller here passes them): an affine fit x ≈ scale·l − min for levels 0..nmax,
     * trying nstep + 1 scales (rmin + rdelta·k + nmax) / (max − min) and keeping the one with the least weighted
     * error (absolute with {@code useMad}, squared otherwise); {@code weights[0, n)} are the group's. Stores the min
     * (a positive offset) in {@code mins[minAt]} and returns the scale. {@code aux} is scratch of n ints.
     */
    static float makeQkxQuants(int n, int nmax, float[] x, int xAt, float[] weights, int[] levels, int at,
            float[] mins, int minAt, int[] aux, float rmin, float rdelta, int nstep, boolean useMad) {
        float min = x[xAt];
        float max = x[xAt];
        float sumW = weights[0];
        float sumX = sumW * x[xAt];
        for (int i = 1; i < n; i++) {
            float xi = x[xAt + i];
            if (xi < min) min = xi;
            if (xi > max) max = xi;
            float w = weights[i];
            sumW += w;
            sumX += w * xi;
        }
        if (min > 0) min = 0;
        if (max == min) {
            for (int i = 0; i < n; i++) levels[at + i] = 0;
            mins[minAt] = -min;
            return 0f;
        }
        float iscale = nmax / (max - min);
        float scale = 1 / iscale;
        float bestError = 0;
        for (int i = 0; i < n; i++) {
            float xi = x[xAt + i];
            int l = Math.max(0, Math.min(nmax, nearestInt(iscale * (xi - min))));
            levels[at + i] = l;
            float diff = scale * l + min - xi;
            diff = useMad ? Math.abs(diff) : diff * diff;
            bestError += weights[i] * diff;
        }
        if (nstep < 1) {
            mins[minAt] = -min;
            return scale;
        }
        for (int is = 0; is <= nstep; is++) {
            iscale = (rmin + rdelta * is + nmax) / (max - min);
            float sumL = 0;
            float sumL2 = 0;
            float sumXL = 0;
            for (int i = 0; i < n; i++) {
                float xi = x[xAt + i];
                int l = Math.max(0, Math.min(nmax, nearestInt(iscale * (xi - min))));
                aux[i] = l;
                float w = weights[i];
                sumL += w * l;
                sumL2 += w * l * l;
                sumXL += w * l * xi;
            }
            float det = sumW * sumL2 - sumL * sumL;
            if (det > 0) {
                float thisScale = (sumW * sumXL - sumX * sumL) / det;
                float thisMin = (sumL2 * sumX - sumL * sumXL) / det;
                if (thisMin > 0) {
                    thisMin = 0;
                    thisScale = sumXL / sumL2;
                }
                float error = 0;
                for (int i = 0; i < n; i++) {
                    float diff = thisScale * aux[i] + thisMin - x[xAt + i];
                    diff = useMad ? Math.abs(diff) : diff * diff;
                    error += weights[i] * diff;
                }
                if (error < bestError) {
                    System.arraycopy(aux, 0, levels, at, n);
                    bestError = error;
                    scale = thisScale;
                    min = thisMin;
                }
            }
        }
        mins[minAt] = -min;
        return scale;
    }

    /**
     * make_qp_quants: a scale for non-negative values (the K-quants' sub-block scales and mins, IQ2_XXS's
     * magnitudes) on levels 0..nmax, weighted by {@code qw}: 9 trial scales, then up to 5 rounds of one-level
     * refinements. Levels are stored as C's uint8_t would hold them ({@code & 0xFF}), since the refinement reads them
     * back. Returns the scale.
     */
    static float makeQpQuants(int n, int nmax, float[] x, int[] levels, float[] qw) {
        float max = 0;
        for (int i = 0; i < n; i++) max = Math.max(max, x[i]);
        if (max < GROUP_MAX_EPS) {
            for (int i = 0; i < n; i++) levels[i] = 0;
            return 0f;
        }
        float iscale = nmax / max;
        float scale = 1 / iscale;
        float bestMse = 0;
        for (int i = 0; i < n; i++) {
            int l = nearestInt(iscale * x[i]) & 0xFF;
            float diff = x[i] - scale * l;
            bestMse += qw[i] * diff * diff;
        }
        for (int is = -4; is <= 4; is++) {
            if (is == 0) continue;
            float iscaleIs = (0.1f * is + nmax) / max;
            float scaleIs = 1 / iscaleIs;
            float mse = 0;
            for (int i = 0; i < n; i++) {
                int l = Math.min(nmax, nearestInt(iscaleIs * x[i]));
                float diff = x[i] - scaleIs * l;
                mse += qw[i] * diff * diff;
            }
            if (mse < bestMse) {
                bestMse = mse;
                iscale = iscaleIs;
            }
        }
        float sumlx = 0;
        float suml2 = 0;
        for (int i = 0; i < n; i++) {
            int l = Math.min(nmax, nearestInt(iscale * x[i]));
            levels[i] = l & 0xFF;
            float w = qw[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        for (int round = 0; round < 5; round++) {
            int changed = 0;
            for (int i = 0; i < n; i++) {
                float w = qw[i];
                int li = levels[i];
                float slx = sumlx - w * x[i] * li;
                float sl2 = suml2 - w * li * li;
                if (slx > 0 && sl2 > 0) {
                    int newL = Math.min(nmax, nearestInt(x[i] * sl2 / slx));
                    if (newL != li) {
                        slx += w * x[i] * newL;
                        sl2 += w * newL * newL;
                        if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                            levels[i] = newL & 0xFF;
                            sumlx = slx;
                            suml2 = sl2;
                            changed++;
                        }
                    }
                }
            }
            if (changed == 0) break;
        }
        return suml2 > 0f ? sumlx / suml2 : 0f;
    }
}
