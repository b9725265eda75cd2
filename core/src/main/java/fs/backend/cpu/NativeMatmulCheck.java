package fs.backend.cpu;

import fs.FsException;
import fs.backend.Buffer;
import fs.backend.Weight;
import fs.backend.cpu.NativeKernels.Activations;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The native kernels checked against the exact Vector API path one matmul at a time, on the exact path's own input:
 * for {@code fs verify --native}. Each output of a native matmul differs from the exact one by what rounding the
 * input to int8 moved (the kernels multiply the quantized values exactly, up to float32 rounding) and by the two
 * sides' float32 roundings, so it must lie within
 *
 * <pre>
 *   B = Σ_j |w_j|·|x_j − x̂_j|  +  (blocks + 6)·2^-23·Σ_j |w_j|·|x̂_j|  +  k·2^-24·Σ_j |w_j|·|x_j|
 * </pre>
 *
 * of it: x̂ the values the input's quants stand for, w the weights as llama.cpp's reference dequantizes them; the
 * second term is the native sums' rounding (NativeKernelsTest's bound), the third the exact path's, at its worst.
 * The first term is the rounding itself, of this very input: a bug (a wrong scale, a lost bit, a misread block) is
 * far outside it, the int8 rounding never is. Single-threaded, allocating as it goes: a diagnostic, not a kernel.
 */
public final class NativeMatmulCheck {
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Q8_K's offsets: the quants, the multiples per chunk of 32; Q8_0's: the quants, per 4 (blocks.h). */
    private static final int Q8_K_QS = 4, Q8_K_CHUNK_MULTIPLES = 324, Q8_0_QS = 4, Q8_0_MULTIPLES = 36;

    private final NativeKernels kernels;

    /**
     * One matmul's comparison: the largest |native − exact| over its outputs, the largest ratio of that to the
     * output's bound B (within the bound: ≤ 1), and the NMSE Σ(native − exact)² / Σ exact².
     */
    public record Result(long outputs, double maxAbs, double worstRatio, double nmse) {
        public boolean withinBound() {
            return worstRatio <= 1;
        }
    }

    private NativeMatmulCheck(NativeKernels kernels) {
        this.kernels = kernels;
    }

    /** The check of the best native variant this CPU runs; an error saying why when the library cannot load. */
    public static NativeMatmulCheck load() {
        CpuKernels kernels = CpuKernels.nativeKernels(null);
        if (kernels.nativeKernels() == null) throw new FsException("verify --native: " + kernels.unavailable());
        return new NativeMatmulCheck(kernels.nativeKernels());
    }

    public String isa() {
        return kernels.isa();
    }

    /** Whether the native kernels have matmuls of weights in {@code type}. */
    public static boolean covers(DType type) {
        return NativeKernels.covers(type);
    }

    /** Whether the native kernels multiply this weight (a weight of the Vector API backend). */
    public boolean covers(Weight w) {
        return w instanceof CpuWeight weight && NativeKernels.covers(weight.dtype());
    }

    /**
     * Multiplies the {@code rows} rows of {@code x} by {@code w} on the native kernels and compares the result with
     * {@code exact}, the exact path's product of the same operands. All three belong to a Vector API backend.
     */
    public Result check(Buffer x, Weight w, Buffer exact, int rows) {
        CpuWeight weight = (CpuWeight) w;
        int k = (int) weight.columns(), n = (int) weight.rows();
        Activations format = Activations.of(weight.dtype());
        float[] input = new float[rows * k], wanted = new float[rows * n], got = new float[rows * n];
        MemorySegment.copy(((CpuBuffer) x).segment(), ValueLayout.JAVA_FLOAT, 0, input, 0, input.length);
        MemorySegment.copy(((CpuBuffer) exact).segment(), ValueLayout.JAVA_FLOAT, 0, wanted, 0, wanted.length);
        MemorySegment quants = MemorySegment.ofArray(new byte[(int) (rows * format.rowBytes(k))]);
        kernels.quantize(format, MemorySegment.ofArray(input), quants, input.length);
        kernels.matmul(weight.dtype(), weight.data(), weight.rowBytes(), 0, n, quants, rows, k,
                MemorySegment.ofArray(got), n);
        float[] rounded = dequantize(format, quants, input.length);

        int blocks = k / weight.dtype().blockElements();
        float[] row = new float[k];
        double maxAbs = 0, worstRatio = 0, errors = 0, signal = 0;
        for (int i = 0; i < n; i++) {
            weight.format().dequantize(weight.data(), i * weight.rowBytes(), k, row, 0);
            for (int r = 0; r < rows; r++) {
                double moved = 0, quantized = 0, magnitude = 0;
                for (int j = 0; j < k; j++) {
                    double a = Math.abs(row[j]);
                    moved += a * Math.abs((double) input[r * k + j] - rounded[r * k + j]);
                    quantized += a * Math.abs(rounded[r * k + j]);
                    magnitude += a * Math.abs(input[r * k + j]);
                }
                double bound = moved + (blocks + 6) * 0x1p-23 * quantized + k * 0x1p-24 * magnitude;
                double difference = Math.abs((double) got[r * n + i] - wanted[r * n + i]);
                maxAbs = Math.max(maxAbs, difference);
                // A NaN difference makes the ratio NaN, and Math.max keeps a NaN: never within the bound.
                worstRatio = Math.max(worstRatio, difference == 0 ? 0 : difference / bound);
                errors += difference * difference;
                signal += (double) wanted[r * n + i] * wanted[r * n + i];
            }
        }
        return new Result((long) rows * n, maxAbs, worstRatio, signal > 0 ? errors / signal : errors);
    }

    /**
     * The values {@code count} quantized activations stand for: d·m·q, m its group's multiple (Q8_0: per 4, Q8_K: per
     * 32); the bf16, f16 or float itself (the float formats).
     */
    private static float[] dequantize(Activations format, MemorySegment quants, int count) {
        float[] values = new float[count];
        for (int j = 0; j < count; j++) {
            switch (format) {
                case BF16 -> values[j] = Float.intBitsToFloat(quants.get(I16, 2L * j) << 16);
                case F16 -> values[j] = Float.float16ToFloat(quants.get(I16, 2L * j));
                case F32 -> values[j] = quants.get(F32, 4L * j);
                case Q8_0, Q8_K -> values[j] = quantized(format, quants, j);
            }
        }
        return values;
    }

    /** Value j of Q8_0 or Q8_K rows: d·m·q, m its group's multiple (Q8_0: per 4 values, Q8_K: per 32). */
    private static float quantized(Activations format, MemorySegment quants, int j) {
        long at = (long) (j / format.elements) * format.bytes;
        int i = j % format.elements;
        if (format == Activations.Q8_0) {
            float step = quants.get(F32, at) * quants.get(I16, at + Q8_0_MULTIPLES + 4L * (i / 4));
            return step * quants.get(ValueLayout.JAVA_BYTE, at + Q8_0_QS + i);
        }
        float step = quants.get(F32, at) * quants.get(I16, at + Q8_K_CHUNK_MULTIPLES + 2L * (i / 32));
        return step * quants.get(ValueLayout.JAVA_BYTE, at + Q8_K_QS + i);
    }
}
