package fs.format;

import static fs.format.QuantMath.GROUP_MAX_EPS;
import static fs.format.QuantMath.half;
import static fs.format.QuantMath.nearestInt;
import static fs.format.QuantMath.putHalf;
import static fs.format.QuantMath.putInt;

import fs.FsException;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * IQ2_XXS, as ggml-quants.c's quantize_row_iq2_xxs_impl: each group of 8 weights becomes 7 sign bits (the 8th
 * implied by an even count of minus signs, the smallest weighted weight flipped when the count is odd) and one of
 * the 256 grid points of magnitudes {1, 3, 5} × scale ({@link Iq2XxsTables}); each group of 32 gets a scale, fitted
 * over 13 trial scales, and stored in 4 bits of the block's f16 d / 31. A point the rounding lands on that is not
 * on the grid is replaced by its best weighted neighbour among the grid points at the two smallest distances, as
 * iq2xs_init_impl lists them. Layout: {@link ReferenceDequantizer}'s iq2_xxs.
 *
 * <p>Like llama.cpp, it needs importance: without it the search has nothing to weigh the signs and points by.
 */
final class Iq2XxsQuantizer implements RowQuantizer {
    static final Iq2XxsQuantizer INSTANCE = new Iq2XxsQuantizer();

    private static final int QK = DType.IQ2_XXS.blockElements();
    private static final int BLOCK_BYTES = DType.IQ2_XXS.blockBytes();
    private static final int MAX_Q = 3;

    /** Level (0..2, magnitude 2·level + 1) of weight j of grid point i at [8i + j]: iq2xs_init_impl's grid. */
    private static final int[] GRID = new int[256 * 8];
    /** For a point coded Σ level_j << 2j: its grid index, or -1 when it is not on the grid (kmap_q2xs). */
    private static final int[] MAP = new int[1 << 16];
    /** For a point not on the grid: the grid indices to try, nearest first, ties by index (kneighbors_q2xs). */
    private static final int[][] NEIGHBOURS = new int[1 << 16][];

    static {
        java.util.Arrays.fill(MAP, -1);
        for (int i = 0; i < 256; i++) {
            long point = Iq2XxsTables.gridPoint(i);
            int code = 0;
            for (int j = 0; j < 8; j++) {
                int magnitude = (int) (point >>> 8 * j & 0xFF);
                int level = magnitude == 0x08 ? 0 : magnitude == 0x19 ? 1 : 2;
                GRID[8 * i + j] = level;
                code |= level << 2 * j;
            }
            MAP[code] = i;
        }
        int[] distance = new int[256];
        for (int code = 0; code < 1 << 16; code++) {
            if (MAP[code] >= 0 || !levelsAtMost2(code)) continue; // the search only looks up levels 0..2
            int nearest = Integer.MAX_VALUE;
            for (int i = 0; i < 256; i++) {
                int d2 = 0;
                for (int j = 0; j < 8; j++) {
                    int diff = 2 * GRID[8 * i + j] - 2 * (code >> 2 * j & 3);
                    d2 += diff * diff;
                }
                distance[i] = d2;
                nearest = Math.min(nearest, d2);
            }
            int second = Integer.MAX_VALUE;
            for (int d2 : distance) if (d2 > nearest) second = Math.min(second, d2);
            int count = 0;
            for (int d2 : distance) if (d2 == nearest || d2 == second) count++;
            int[] list = new int[count];
            int n = 0;
            for (int i = 0; i < 256; i++) if (distance[i] == nearest) list[n++] = i;
            for (int i = 0; i < 256; i++) if (distance[i] == second) list[n++] = i;
            NEIGHBOURS[code] = list;
        }
    }

    private static boolean levelsAtMost2(int code) {
        for (int j = 0; j < 8; j++) if ((code >> 2 * j & 3) == 3) return false;
        return true;
    }

    private Iq2XxsQuantizer() {}

    @Override
    public void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset) {
        if (importance == null) {
            throw new FsException("IQ2_XXS needs an importance matrix (--imatrix), as llama.cpp does");
        }
        RowQuantizers.checkArguments(DType.IQ2_XXS, weights, rows, columns, importance, out, outOffset);
        byte[] row = new byte[columns / QK * BLOCK_BYTES];
        Scratch s = new Scratch();
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < columns / QK; b++) {
                block(weights, r * columns + b * QK, importance, b * QK, row, b * BLOCK_BYTES, s);
            }
            MemorySegment.copy(row, 0, out, ValueLayout.JAVA_BYTE, outOffset + (long) r * row.length, row.length);
        }
    }

    /** One call's scratch (the C function's locals). */
    private static final class Scratch {
        final float[] scales = new float[QK / 32];
        final float[] weight = new float[32];
        final float[] xval = new float[32];
        final int[] levels = new int[32];
        final int[] aux = new int[32];
        final float[] waux = new float[32];
        final int[] blockSigns = new int[4];
        final int[] q2 = new int[2 * QK / 32];
    }

    private static void block(float[] x, int at, float[] importance, int column, byte[] out, int o, Scratch s) {
        java.util.Arrays.fill(s.q2, 0);
        float maxScale = 0;
        float sumX2 = 0;
        for (int i = 0; i < QK; i++) sumX2 += x[at + i] * x[at + i];
        float sigma2 = sumX2 / QK;
        for (int ib = 0; ib < QK / 32; ib++) {
            int xb = at + 32 * ib;
            for (int i = 0; i < 32; i++) {
                s.weight[i] = importance[column + 32 * ib + i] * (float) Math.sqrt(sigma2 + x[xb + i] * x[xb + i]);
            }
            for (int i = 0; i < 32; i++) s.waux[i] = (float) Math.sqrt(s.weight[i]);
            signs(x, xb, s);
            float max = s.xval[0];
            for (int i = 1; i < 32; i++) max = Math.max(max, s.xval[i]);
            if (max < GROUP_MAX_EPS) {
                s.scales[ib] = 0;
                continue;
            }
            float scale = QuantMath.makeQpQuants(32, MAX_Q + 1, s.xval, s.levels, s.weight);
            float effMax = scale * MAX_Q;
            if (effMax <= 0) {
                s.scales[ib] = 0;
                continue;
            }
            float best = 0;
            for (int is = -6; is <= 6; is++) {
                float id = (2 * MAX_Q - 1 + is * 0.1f) / effMax;
                float thisScale = 1 / id;
                for (int k = 0; k < 4; k++) onGrid(s.aux, 8 * k, id, thisScale, s);
                float sumqx = 0;
                float sumq2 = 0;
                for (int i = 0; i < 32; i++) {
                    float w = s.weight[i];
                    float q = 2 * s.aux[i] + 1;
                    sumqx += w * s.xval[i] * q;
                    sumq2 += w * q * q;
                }
                if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    System.arraycopy(s.aux, 0, s.levels, 0, 32);
                }
            }
            if (scale > 0) {
                float id = 1 / scale;
                for (int k = 0; k < 4; k++) onGrid(s.levels, 8 * k, id, scale, s);
                float sumqx = 0;
                float sumq2 = 0;
                for (int i = 0; i < 32; i++) {
                    float w = s.weight[i];
                    float q = 2 * s.levels[i] + 1;
                    sumqx += w * s.xval[i] * q;
                    sumq2 += w * q * q;
                }
                if (sumq2 > 0) scale = sumqx / sumq2;
            }
            if (scale < 0) {
                // llama.cpp: "should never happen", but a stored scale is unsigned: flip it and every sign
                scale = -scale;
                for (int k = 0; k < 4; k++) s.blockSigns[k] = ~s.blockSigns[k] & 127;
            }
            for (int k = 0; k < 4; k++) {
                int code = 0;
                for (int i = 0; i < 8; i++) code |= s.levels[8 * k + i] << 2 * i;
                int index = MAP[code];
                if (index < 0) throw new IllegalStateException("IQ2_XXS point " + code + " is not on the grid");
                s.q2[2 * ib] |= index << 8 * k;
                s.q2[2 * ib + 1] |= s.blockSigns[k] << 7 * k;
            }
            s.scales[ib] = scale;
            maxScale = Math.max(maxScale, scale);
        }
        if (maxScale == 0) {
            java.util.Arrays.fill(out, o, o + BLOCK_BYTES, (byte) 0);
            return;
        }
        float d = maxScale / 31;
        putHalf(out, o, half(d));
        float id = 1 / d;
        for (int ib = 0; ib < QK / 32; ib++) {
            int l = Math.max(0, Math.min(15, nearestInt(0.5f * (id * s.scales[ib] - 1))));
            s.q2[2 * ib + 1] |= l << 28;
        }
        for (int i = 0; i < s.q2.length; i++) putInt(out, o + 2 + 4 * i, s.q2[i]);
    }

    /**
     * The magnitudes of group {@code xb}'s 32 weights into {@code s.xval} and their 7 stored sign bits per 8 into
     * {@code s.blockSigns}; with an odd count of minus signs, the weight of least weight·x² takes the wrong sign.
     */
    private static void signs(float[] x, int xb, Scratch s) {
        for (int k = 0; k < 4; k++) {
            int flips = 0;
            int bits = 0;
            for (int i = 0; i < 8; i++) {
                float v = x[xb + 8 * k + i];
                if (v >= 0) {
                    s.xval[8 * k + i] = v;
                } else {
                    s.xval[8 * k + i] = -v;
                    flips++;
                    bits |= 1 << i;
                }
            }
            if (flips % 2 != 0) {
                int imin = 0;
                float v0 = x[xb + 8 * k];
                float min = s.weight[8 * k] * v0 * v0;
                for (int i = 1; i < 8; i++) {
                    float v = x[xb + 8 * k + i];
                    float ax = s.weight[8 * k + i] * v * v;
                    if (ax < min) {
                        min = ax;
                        imin = i;
                    }
                }
                s.xval[8 * k + imin] = -s.xval[8 * k + imin];
                bits ^= 1 << imin;
            }
            s.blockSigns[k] = bits & 127;
        }
    }

    /**
     * Levels 0..2 for the 8 magnitudes {@code s.xval[g, g + 8)} at inverse scale {@code id} into
     * {@code levels[g, g + 8)}, moved to the best grid neighbour at {@code scale} when they are off the grid
     * (iq2_find_best_neighbour: the least Σ √weight·(scale·q − x)², the first of equals).
     */
    private static void onGrid(int[] levels, int g, float id, float scale, Scratch s) {
        int code = 0;
        for (int i = 0; i < 8; i++) {
            int l = Math.max(0, Math.min(MAX_Q - 1, nearestInt(0.5f * (id * s.xval[g + i] - 1))));
            levels[g + i] = l;
            code |= l << 2 * i;
        }
        if (MAP[code] >= 0) return;
        float bestD2 = Float.MAX_VALUE;
        int best = -1;
        for (int candidate : NEIGHBOURS[code]) {
            float d2 = 0;
            for (int i = 0; i < 8; i++) {
                float q = 2 * GRID[8 * candidate + i] + 1;
                float diff = scale * q - s.xval[g + i];
                d2 += s.waux[g + i] * diff * diff;
            }
            if (d2 < bestD2) {
                bestD2 = d2;
                best = candidate;
            }
        }
        for (int i = 0; i < 8; i++) levels[g + i] = GRID[8 * best + i];
    }
}
