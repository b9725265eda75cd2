package fs.backend.cpu;

import fs.backend.Buffer;
import fs.backend.ForwardingBackend;
import fs.backend.Weight;
import fs.backend.cpu.NativeKernels.Activations;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The Vector API backend with the native kernels' one approximation and nothing else: before a matmul of a format
 * libfscpu has, each input row is replaced by the values its int8 quants stand for (d·m·q of {@link Int8Reference});
 * the matmul itself is the exact float kernel. The native path differs from this only by float32 rounding.
 */
final class Int8ActivationsBackend extends ForwardingBackend {
    private Buffer rounded;

    Int8ActivationsBackend() {
        super(new VectorBackend(2, CpuKernels.vectorApi()));
        rounded = delegate.allocate(0);
    }

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
}
