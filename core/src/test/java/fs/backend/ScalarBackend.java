package fs.backend;

import fs.FsException;
import fs.format.ReferenceDequantizer;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * The oracle: every op as the plain loop its definition says, with sums and transcendental functions in double and
 * each result rounded once to float32. Slow on purpose; tests compare the real backends against it.
 */
public final class ScalarBackend implements Backend {

    private record ScalarBuffer(float[] data) implements Buffer {
        @Override
        public long length() {
            return data.length;
        }
    }

    /** The weight decoded once to floats, row-major, by the reference dequantizer. */
    private record ScalarWeight(String name, DType dtype, long rows, long columns, float[] values) implements Weight {
        float get(long row, long column) {
            return values[(int) (row * columns + column)];
        }
    }

    /** keys[layer][sequence * contextLength + position][kvHead][d], values likewise. */
    private record ScalarKvCache(int layers, int sequences, int contextLength, int kvHeads, int headDim,
                                 float[][][][] keys, float[][][][] values) implements KvCache {
        @Override
        public KvCacheTypes types() {
            return KvCacheTypes.F32;
        }

        int slot(RowPositions rows, int r) {
            return rows.sequence(r) * contextLength + rows.position(r);
        }
    }

    @Override
    public String description() {
        return "scalar oracle";
    }

    /** Every format the reference dequantizer decodes. */
    @Override
    public boolean supports(DType dtype) {
        return ReferenceDequantizer.decodes(dtype);
    }

    @Override
    public Weight upload(Tensor tensor) {
        if (!supports(tensor.dtype())) throw new FsException("the oracle does not read " + tensor.dtype());
        int rows = Math.toIntExact(tensor.rows()), columns = Math.toIntExact(tensor.columns());
        float[] values = new float[Math.multiplyExact(rows, columns)];
        float[] row = new float[columns];
        long rowBytes = tensor.dtype().rowBytes(columns);
        for (int r = 0; r < rows; r++) {
            ReferenceDequantizer.decode(tensor.dtype(), tensor.data().asSlice(r * rowBytes, rowBytes), row);
            System.arraycopy(row, 0, values, r * columns, columns);
        }
        return new ScalarWeight(tensor.name(), tensor.dtype(), rows, columns, values);
    }

    @Override
    public Buffer allocate(long length) {
        return new ScalarBuffer(new float[Math.toIntExact(length)]);
    }

    @Override
    public KvCache allocateKvCache(int layers, int sequences, int contextLength, int kvHeads, int headDim,
                                   KvCacheTypes types) {
        BackendChecks.checkKvCacheTypes(types, headDim, kvCacheTypes(), "scalar");
        int slots = Math.multiplyExact(sequences, contextLength);
        return new ScalarKvCache(layers, sequences, contextLength, kvHeads, headDim,
                new float[layers][slots][kvHeads][headDim], new float[layers][slots][kvHeads][headDim]);
    }

    @Override
    public Set<KvCacheType> kvCacheTypes() {
        return EnumSet.of(KvCacheType.F32);
    }

    private static float[] data(Buffer b) {
        return ((ScalarBuffer) b).data();
    }

    @Override
    public void embed(Weight table, int[] tokens, Buffer out) {
        ScalarWeight t = (ScalarWeight) table;
        float[] o = data(out);
        int width = (int) t.columns();
        for (int r = 0; r < tokens.length; r++) {
            for (int i = 0; i < width; i++) o[r * width + i] = t.get(tokens[r], i);
        }
    }

    @Override
    public void rmsNorm(Buffer x, Weight gamma, Buffer out, int rows, float eps) {
        ScalarWeight g = (ScalarWeight) gamma;
        float[] xs = data(x), o = data(out);
        int width = (int) g.columns();
        for (int r = 0; r < rows; r++) {
            double sumSquares = 0;
            for (int i = 0; i < width; i++) sumSquares += (double) xs[r * width + i] * xs[r * width + i];
            double scale = 1.0 / Math.sqrt(sumSquares / width + eps);
            for (int i = 0; i < width; i++) o[r * width + i] = (float) (xs[r * width + i] * scale * g.get(0, i));
        }
    }

    @Override
    public void matmul(Buffer x, Weight w, Buffer out, int rows) {
        ScalarWeight weight = (ScalarWeight) w;
        float[] xs = data(x), o = data(out);
        int n = (int) weight.rows(), k = (int) weight.columns();
        for (int r = 0; r < rows; r++) {
            for (int j = 0; j < n; j++) {
                double sum = 0;
                for (int i = 0; i < k; i++) sum += (double) xs[r * k + i] * weight.get(j, i);
                o[r * n + j] = (float) sum;
            }
        }
    }

    /** Slot by slot, in slot order: the definition, with no grouping by expert. */
    @Override
    public void matmulExperts(Buffer x, boolean xPerSlot, java.util.List<Weight> experts, ExpertRouting routing,
            Buffer out) {
        float[] xs = data(x), o = data(out);
        for (int s = 0; s < routing.slots(); s++) {
            ScalarWeight weight = (ScalarWeight) experts.get(routing.expert(s));
            int n = (int) weight.rows(), k = (int) weight.columns();
            int row = xPerSlot ? s : s / routing.used();
            for (int j = 0; j < n; j++) {
                double sum = 0;
                for (int i = 0; i < k; i++) sum += (double) xs[row * k + i] * weight.get(j, i);
                o[s * n + j] = (float) sum;
            }
        }
    }

    @Override
    public void sumExperts(Buffer slots, ExpertRouting routing, Buffer out, int width) {
        float[] ss = data(slots), o = data(out);
        for (int r = 0; r < routing.rows(); r++) {
            for (int i = 0; i < width; i++) {
                double sum = 0;
                for (int j = 0; j < routing.used(); j++) {
                    int s = r * routing.used() + j;
                    sum += (double) routing.weight(s) * ss[s * width + i];
                }
                o[r * width + i] = (float) sum;
            }
        }
    }

    @Override
    public void rope(Buffer x, RowPositions placed, int heads, Rope rope) {
        int rows = placed.rows();
        float[] xs = data(x);
        int headDim = rope.headDim();
        int half = headDim / 2;
        double[] inverseFrequencies = rope.inverseFrequencies();
        double scale = rope.attentionFactor();
        for (int r = 0; r < rows; r++) {
            for (int h = 0; h < heads; h++) {
                int base = (r * heads + h) * headDim;
                for (int i = 0; i < half; i++) {
                    double angle = (double) placed.position(r) * inverseFrequencies[i];
                    double c = Math.cos(angle) * scale, s = Math.sin(angle) * scale;
                    double x1 = xs[base + i], x2 = xs[base + i + half];
                    xs[base + i] = (float) (x1 * c - x2 * s);
                    xs[base + i + half] = (float) (x2 * c + x1 * s);
                }
            }
        }
    }

    @Override
    public void storeKv(KvCache cache, int layer, Buffer k, Buffer v, RowPositions placed) {
        ScalarKvCache c = (ScalarKvCache) cache;
        float[] ks = data(k), vs = data(v);
        for (int r = 0; r < placed.rows(); r++) {
            for (int h = 0; h < c.kvHeads(); h++) {
                for (int d = 0; d < c.headDim(); d++) {
                    int i = (r * c.kvHeads() + h) * c.headDim() + d;
                    c.keys()[layer][c.slot(placed, r)][h][d] = ks[i];
                    c.values()[layer][c.slot(placed, r)][h][d] = vs[i];
                }
            }
        }
    }

    @Override
    public void attention(Buffer q, KvCache cache, int layer, Buffer out, RowPositions placed, int heads) {
        ScalarKvCache c = (ScalarKvCache) cache;
        float[] qs = data(q), o = data(out);
        int headDim = c.headDim(), group = heads / c.kvHeads();
        for (int r = 0; r < placed.rows(); r++) {
            int positions = placed.position(r) + 1;
            int first = placed.sequence(r) * c.contextLength();
            for (int h = 0; h < heads; h++) {
                int base = (r * heads + h) * headDim;
                float[][] keys = new float[positions][];
                double[] scores = new double[positions];
                double max = Double.NEGATIVE_INFINITY;
                for (int p = 0; p < positions; p++) {
                    keys[p] = c.keys()[layer][first + p][h / group];
                    double dot = 0;
                    for (int d = 0; d < headDim; d++) dot += (double) qs[base + d] * keys[p][d];
                    scores[p] = dot / Math.sqrt(headDim);
                    max = Math.max(max, scores[p]);
                }
                double sum = 0;
                for (int p = 0; p < positions; p++) {
                    scores[p] = Math.exp(scores[p] - max);
                    sum += scores[p];
                }
                for (int d = 0; d < headDim; d++) {
                    double acc = 0;
                    for (int p = 0; p < positions; p++) acc += scores[p] / sum * c.values()[layer][first + p][h / group][d];
                    o[base + d] = (float) acc;
                }
            }
        }
    }

    @Override
    public void siluMul(Buffer gate, Buffer up, Buffer out, long length) {
        float[] g = data(gate), u = data(up), o = data(out);
        for (int i = 0; i < length; i++) o[i] = (float) (g[i] / (1 + Math.exp(-g[i])) * u[i]);
    }

    @Override
    public void add(Buffer x, Buffer y, long length) {
        float[] xs = data(x), ys = data(y);
        for (int i = 0; i < length; i++) xs[i] += ys[i];
    }

    @Override
    public void copy(Buffer src, long srcOffset, Buffer dst, long dstOffset, long length) {
        System.arraycopy(data(src), (int) srcOffset, data(dst), (int) dstOffset, (int) length);
    }

    @Override
    public void read(Buffer src, long offset, MemorySegment dst) {
        int floats = Math.toIntExact(BackendChecks.floatsIn(dst, "read destination"));
        BackendChecks.requireRange(src, offset, floats, "read source");
        MemorySegment.copy(data(src), (int) offset, dst, ValueLayout.JAVA_FLOAT, 0, floats);
    }

    @Override
    public void write(MemorySegment src, Buffer dst, long offset) {
        int floats = Math.toIntExact(BackendChecks.floatsIn(src, "write source"));
        BackendChecks.requireRange(dst, offset, floats, "write destination");
        MemorySegment.copy(src, ValueLayout.JAVA_FLOAT, 0, data(dst), (int) offset, floats);
    }

    @Override
    public Optional<MemorySegment> pinnedStaging(long bytes) {
        return Optional.empty();
    }

    @Override
    public int argmax(Buffer x, long offset, int length) {
        float[] xs = data(x);
        int best = 0;
        for (int i = 1; i < length; i++) if (xs[(int) offset + i] > xs[(int) offset + best]) best = i;
        return best;
    }

    @Override
    public void close() {}
}
