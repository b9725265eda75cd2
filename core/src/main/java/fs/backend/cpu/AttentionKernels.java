package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.F;
import static fs.backend.cpu.MatmulKernels.FLOAT;
import static fs.backend.cpu.MatmulKernels.L;
import static fs.backend.cpu.MatmulKernels.LE;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * The kernels of causal attention over the {@link CpuKvCache}, for {@link #QUERIES} queries that share a kv head at
 * once: every key and value vector loaded serves all of them, which is what makes prefill attention cheap (one query
 * at a time re-read the whole cache per head and row).
 *
 * <p>Every score is the sequential FMA chain over the head's dimensions, and every output element the sequential FMA
 * chain over the positions the query may see, from 0 on. A query's results therefore do not depend on which other
 * queries share its tile, so a row of a batch gets exactly the floats it gets alone.
 */
final class AttentionKernels {
    /** Queries per tile. */
    static final int QUERIES = 6;

    private AttentionKernels() {}

    /**
     * Scores of the queries (query i at {@code q[qAt + i·headDim..]}) against four consecutive key blocks starting at
     * byte {@code block}: position j of the blocks goes to {@code s[at + i·sStride + j]}.
     */
    static void scores4Blocks(MemorySegment keys, long block, float[] q, int qAt, int headDim, float[] s, int sStride,
                              int at) {
        int q0 = qAt, q1 = q0 + headDim, q2 = q1 + headDim, q3 = q2 + headDim, q4 = q3 + headDim, q5 = q4 + headDim;
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a03 = a00;
        FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00;
        FloatVector a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        FloatVector a40 = a00, a41 = a00, a42 = a00, a43 = a00;
        FloatVector a50 = a00, a51 = a00, a52 = a00, a53 = a00;
        long dimension = 4L * L, next = headDim * dimension;
        for (int d = 0; d < headDim; d++) {
            long k = block + d * dimension;
            FloatVector k0 = FloatVector.fromMemorySegment(F, keys, k, LE);
            FloatVector k1 = FloatVector.fromMemorySegment(F, keys, k + next, LE);
            FloatVector k2 = FloatVector.fromMemorySegment(F, keys, k + 2 * next, LE);
            FloatVector k3 = FloatVector.fromMemorySegment(F, keys, k + 3 * next, LE);
            FloatVector b = FloatVector.broadcast(F, q[q0 + d]);
            a00 = k0.fma(b, a00);
            a01 = k1.fma(b, a01);
            a02 = k2.fma(b, a02);
            a03 = k3.fma(b, a03);
            b = FloatVector.broadcast(F, q[q1 + d]);
            a10 = k0.fma(b, a10);
            a11 = k1.fma(b, a11);
            a12 = k2.fma(b, a12);
            a13 = k3.fma(b, a13);
            b = FloatVector.broadcast(F, q[q2 + d]);
            a20 = k0.fma(b, a20);
            a21 = k1.fma(b, a21);
            a22 = k2.fma(b, a22);
            a23 = k3.fma(b, a23);
            b = FloatVector.broadcast(F, q[q3 + d]);
            a30 = k0.fma(b, a30);
            a31 = k1.fma(b, a31);
            a32 = k2.fma(b, a32);
            a33 = k3.fma(b, a33);
            b = FloatVector.broadcast(F, q[q4 + d]);
            a40 = k0.fma(b, a40);
            a41 = k1.fma(b, a41);
            a42 = k2.fma(b, a42);
            a43 = k3.fma(b, a43);
            b = FloatVector.broadcast(F, q[q5 + d]);
            a50 = k0.fma(b, a50);
            a51 = k1.fma(b, a51);
            a52 = k2.fma(b, a52);
            a53 = k3.fma(b, a53);
        }
        int o = at;
        a00.intoArray(s, o);
        a01.intoArray(s, o + L);
        a02.intoArray(s, o + 2 * L);
        a03.intoArray(s, o + 3 * L);
        o += sStride;
        a10.intoArray(s, o);
        a11.intoArray(s, o + L);
        a12.intoArray(s, o + 2 * L);
        a13.intoArray(s, o + 3 * L);
        o += sStride;
        a20.intoArray(s, o);
        a21.intoArray(s, o + L);
        a22.intoArray(s, o + 2 * L);
        a23.intoArray(s, o + 3 * L);
        o += sStride;
        a30.intoArray(s, o);
        a31.intoArray(s, o + L);
        a32.intoArray(s, o + 2 * L);
        a33.intoArray(s, o + 3 * L);
        o += sStride;
        a40.intoArray(s, o);
        a41.intoArray(s, o + L);
        a42.intoArray(s, o + 2 * L);
        a43.intoArray(s, o + 3 * L);
        o += sStride;
        a50.intoArray(s, o);
        a51.intoArray(s, o + L);
        a52.intoArray(s, o + 2 * L);
        a53.intoArray(s, o + 3 * L);
    }

    /** {@link #scores4Blocks} of a single key block. */
    static void scores1Block(MemorySegment keys, long block, float[] q, int qAt, int headDim, float[] s, int sStride,
                             int at) {
        int q0 = qAt, q1 = q0 + headDim, q2 = q1 + headDim, q3 = q2 + headDim, q4 = q3 + headDim, q5 = q4 + headDim;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
        long dimension = 4L * L;
        for (int d = 0; d < headDim; d++) {
            FloatVector k = FloatVector.fromMemorySegment(F, keys, block + d * dimension, LE);
            a0 = k.fma(FloatVector.broadcast(F, q[q0 + d]), a0);
            a1 = k.fma(FloatVector.broadcast(F, q[q1 + d]), a1);
            a2 = k.fma(FloatVector.broadcast(F, q[q2 + d]), a2);
            a3 = k.fma(FloatVector.broadcast(F, q[q3 + d]), a3);
            a4 = k.fma(FloatVector.broadcast(F, q[q4 + d]), a4);
            a5 = k.fma(FloatVector.broadcast(F, q[q5 + d]), a5);
        }
        a0.intoArray(s, at);
        a1.intoArray(s, at + sStride);
        a2.intoArray(s, at + 2 * sStride);
        a3.intoArray(s, at + 3 * sStride);
        a4.intoArray(s, at + 4 * sStride);
        a5.intoArray(s, at + 5 * sStride);
    }

    /**
     * Carries the outputs of all queries over dimensions [d, d + 4L) on over positions [from, to): acc[o + i·headDim
     * + d..] += Σ w[wAt + i·wStride + p] · value[p][d..], values at byte {@code head + p·step}, each element's chain in
     * position order. Called for consecutive position ranges from 0 on (acc zero at first), then
     * {@link #continueValues} carries each query on over the positions only it may see.
     */
    static void values4Vectors(MemorySegment values, long head, long step, int d, float[] w, int wAt, int wStride,
                               int from, int to, float[] acc, int accAt, int headDim) {
        int w0 = wAt, w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride, w4 = w3 + wStride, w5 = w4 + wStride;
        int o0 = accAt + d, o1 = o0 + headDim, o2 = o1 + headDim, o3 = o2 + headDim, o4 = o3 + headDim, o5 = o4 + headDim;
        FloatVector a00 = FloatVector.fromArray(F, acc, o0), a01 = FloatVector.fromArray(F, acc, o0 + L);
        FloatVector a02 = FloatVector.fromArray(F, acc, o0 + 2 * L), a03 = FloatVector.fromArray(F, acc, o0 + 3 * L);
        FloatVector a10 = FloatVector.fromArray(F, acc, o1), a11 = FloatVector.fromArray(F, acc, o1 + L);
        FloatVector a12 = FloatVector.fromArray(F, acc, o1 + 2 * L), a13 = FloatVector.fromArray(F, acc, o1 + 3 * L);
        FloatVector a20 = FloatVector.fromArray(F, acc, o2), a21 = FloatVector.fromArray(F, acc, o2 + L);
        FloatVector a22 = FloatVector.fromArray(F, acc, o2 + 2 * L), a23 = FloatVector.fromArray(F, acc, o2 + 3 * L);
        FloatVector a30 = FloatVector.fromArray(F, acc, o3), a31 = FloatVector.fromArray(F, acc, o3 + L);
        FloatVector a32 = FloatVector.fromArray(F, acc, o3 + 2 * L), a33 = FloatVector.fromArray(F, acc, o3 + 3 * L);
        FloatVector a40 = FloatVector.fromArray(F, acc, o4), a41 = FloatVector.fromArray(F, acc, o4 + L);
        FloatVector a42 = FloatVector.fromArray(F, acc, o4 + 2 * L), a43 = FloatVector.fromArray(F, acc, o4 + 3 * L);
        FloatVector a50 = FloatVector.fromArray(F, acc, o5), a51 = FloatVector.fromArray(F, acc, o5 + L);
        FloatVector a52 = FloatVector.fromArray(F, acc, o5 + 2 * L), a53 = FloatVector.fromArray(F, acc, o5 + 3 * L);
        long column = head + 4L * d, vector = 4L * L;
        for (int p = from; p < to; p++) {
            long v = column + p * step;
            FloatVector v0 = FloatVector.fromMemorySegment(F, values, v, LE);
            FloatVector v1 = FloatVector.fromMemorySegment(F, values, v + vector, LE);
            FloatVector v2 = FloatVector.fromMemorySegment(F, values, v + 2 * vector, LE);
            FloatVector v3 = FloatVector.fromMemorySegment(F, values, v + 3 * vector, LE);
            FloatVector b = FloatVector.broadcast(F, w[w0 + p]);
            a00 = v0.fma(b, a00);
            a01 = v1.fma(b, a01);
            a02 = v2.fma(b, a02);
            a03 = v3.fma(b, a03);
            b = FloatVector.broadcast(F, w[w1 + p]);
            a10 = v0.fma(b, a10);
            a11 = v1.fma(b, a11);
            a12 = v2.fma(b, a12);
            a13 = v3.fma(b, a13);
            b = FloatVector.broadcast(F, w[w2 + p]);
            a20 = v0.fma(b, a20);
            a21 = v1.fma(b, a21);
            a22 = v2.fma(b, a22);
            a23 = v3.fma(b, a23);
            b = FloatVector.broadcast(F, w[w3 + p]);
            a30 = v0.fma(b, a30);
            a31 = v1.fma(b, a31);
            a32 = v2.fma(b, a32);
            a33 = v3.fma(b, a33);
            b = FloatVector.broadcast(F, w[w4 + p]);
            a40 = v0.fma(b, a40);
            a41 = v1.fma(b, a41);
            a42 = v2.fma(b, a42);
            a43 = v3.fma(b, a43);
            b = FloatVector.broadcast(F, w[w5 + p]);
            a50 = v0.fma(b, a50);
            a51 = v1.fma(b, a51);
            a52 = v2.fma(b, a52);
            a53 = v3.fma(b, a53);
        }
        a00.intoArray(acc, o0);
        a01.intoArray(acc, o0 + L);
        a02.intoArray(acc, o0 + 2 * L);
        a03.intoArray(acc, o0 + 3 * L);
        a10.intoArray(acc, o1);
        a11.intoArray(acc, o1 + L);
        a12.intoArray(acc, o1 + 2 * L);
        a13.intoArray(acc, o1 + 3 * L);
        a20.intoArray(acc, o2);
        a21.intoArray(acc, o2 + L);
        a22.intoArray(acc, o2 + 2 * L);
        a23.intoArray(acc, o2 + 3 * L);
        a30.intoArray(acc, o3);
        a31.intoArray(acc, o3 + L);
        a32.intoArray(acc, o3 + 2 * L);
        a33.intoArray(acc, o3 + 3 * L);
        a40.intoArray(acc, o4);
        a41.intoArray(acc, o4 + L);
        a42.intoArray(acc, o4 + 2 * L);
        a43.intoArray(acc, o4 + 3 * L);
        a50.intoArray(acc, o5);
        a51.intoArray(acc, o5 + L);
        a52.intoArray(acc, o5 + 2 * L);
        a53.intoArray(acc, o5 + 3 * L);
    }

    /**
     * Carries one query's output elements [d, to) on over positions [from, positions): acc[a + e] += Σ w[p] ·
     * value[p][e], continuing each element's chain in position order (vectors while L elements remain, then scalars).
     */
    static void continueValues(MemorySegment values, long head, long step, int d, int to, float[] w, int wRow,
                               int from, int positions, float[] acc, int a) {
        int e = d;
        for (; e + L <= to; e += L) {
            FloatVector s = FloatVector.fromArray(F, acc, a + e);
            long column = head + 4L * e;
            for (int p = from; p < positions; p++) {
                s = FloatVector.fromMemorySegment(F, values, column + p * step, LE).fma(FloatVector.broadcast(F, w[wRow + p]), s);
            }
            s.intoArray(acc, a + e);
        }
        for (; e < to; e++) {
            float s = acc[a + e];
            long column = head + 4L * e;
            for (int p = from; p < positions; p++) s = Math.fma(values.get(FLOAT, column + p * step), w[wRow + p], s);
            acc[a + e] = s;
        }
    }

    /**
     * Scales the scores s[at..at + positions) and replaces them by their softmax weights. The sum of the exponentials
     * goes through L lane accumulators in position order and {@link MatmulKernels#sumLanes}: it depends on the number
     * of positions only, never on the other queries. {@code lanes} is scratch of L floats or more.
     */
    static void softmax(float[] s, int at, int positions, float scale, float[] lanes) {
        int full = positions - positions % L;
        FloatVector maxima = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY);
        for (int p = at; p < at + full; p += L) {
            FloatVector v = FloatVector.fromArray(F, s, p).mul(scale);
            v.intoArray(s, p);
            maxima = maxima.max(v);
        }
        float max = maxima.reduceLanes(VectorOperators.MAX);  // a maximum is exact in any order
        for (int p = at + full; p < at + positions; p++) {
            s[p] *= scale;
            max = Math.max(max, s[p]);
        }
        FloatVector sums = FloatVector.zero(F);
        for (int p = at; p < at + full; p += L) {
            FloatVector e = FastExp.exp(FloatVector.fromArray(F, s, p).sub(max));
            e.intoArray(s, p);
            sums = sums.add(e);
        }
        sums.intoArray(lanes, 0);
        float sum = MatmulKernels.sumLanes(lanes, 0);
        for (int p = at + full; p < at + positions; p++) {
            s[p] = FastExp.exp(s[p] - max);
            sum += s[p];
        }
        float inverseSum = 1f / sum;
        for (int p = at; p < at + full; p += L) FloatVector.fromArray(F, s, p).mul(inverseSum).intoArray(s, p);
        for (int p = at + full; p < at + positions; p++) s[p] *= inverseSum;
    }
}
