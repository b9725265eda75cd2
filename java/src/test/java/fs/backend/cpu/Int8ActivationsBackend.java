package fs.backend.cpu;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.KvCache;
import fs.backend.Rope;
import fs.backend.RowPositions;
import fs.backend.Weight;
import fs.backend.cpu.NativeKernels.Activations;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The Vector API backend with the native kernels' one approximation and nothing else: before a matmul of a format
 * libfscpu has, each input row is replaced by the values its int8 quants stand for (d·q of {@link Int8Reference});
 * the matmul itself is the exact float kernel. The native path differs from this only by float32 rounding.
 */
final class Int8ActivationsBackend implements Backend {
    private final VectorBackend delegate = new VectorBackend(2, CpuKernels.vectorApi());
    private Buffer rounded = delegate.allocate(0);

    @Override
    public void matmul(Buffer x, Weight w, Buffer out, int rows) {
        DType type = ((CpuWeight) w).dtype();
        if (!NativeKernels.covers(type)) {
            delegate.matmul(x, w, out, rows);
            return;
        }
        Activations format = Activations.of(type);
        int k = (int) ((CpuWeight) w).columns();
        float[] values = new float[rows * k];
        delegate.read(x, 0, values);
        byte[] quants = Int8Reference.quantize(format, values);
        for (int j = 0; j < values.length; j++) values[j] = (float) Int8Reference.activation(format, quants, 0, j);
        if (rounded.length() < values.length) rounded = delegate.allocate(values.length);
        MemorySegment.copy(values, 0, ((CpuBuffer) rounded).segment(), ValueLayout.JAVA_FLOAT, 0, values.length);
        delegate.matmul(rounded, w, out, rows);
    }

    @Override public String description() { return "int8 activations on " + delegate.description(); }
    @Override public boolean supports(DType dtype) { return delegate.supports(dtype); }
    @Override public Weight upload(Tensor tensor) { return delegate.upload(tensor); }
    @Override public Buffer allocate(long length) { return delegate.allocate(length); }
    @Override public KvCache allocateKvCache(int layers, int sequences, int contextLength, int kvHeads, int headDim) {
        return delegate.allocateKvCache(layers, sequences, contextLength, kvHeads, headDim);
    }
    @Override public void embed(Weight table, int[] tokens, Buffer out) { delegate.embed(table, tokens, out); }
    @Override public void rmsNorm(Buffer x, Weight gamma, Buffer out, int rows, float eps) {
        delegate.rmsNorm(x, gamma, out, rows, eps);
    }
    @Override public void rope(Buffer x, RowPositions rows, int heads, Rope rope) {
        delegate.rope(x, rows, heads, rope);
    }
    @Override public void storeKv(KvCache cache, int layer, Buffer k, Buffer v, RowPositions rows) {
        delegate.storeKv(cache, layer, k, v, rows);
    }
    @Override public void attention(Buffer q, KvCache cache, int layer, Buffer out, RowPositions rows, int heads) {
        delegate.attention(q, cache, layer, out, rows, heads);
    }
    @Override public void siluMul(Buffer gate, Buffer up, Buffer out, long length) {
        delegate.siluMul(gate, up, out, length);
    }
    @Override public void add(Buffer x, Buffer y, long length) { delegate.add(x, y, length); }
    @Override public void copy(Buffer src, long srcOffset, Buffer dst, long dstOffset, long length) {
        delegate.copy(src, srcOffset, dst, dstOffset, length);
    }
    @Override public void read(Buffer src, long offset, float[] dst) { delegate.read(src, offset, dst); }
    @Override public int argmax(Buffer x, long offset, int length) { return delegate.argmax(x, offset, length); }
    @Override public void close() { delegate.close(); }
}
