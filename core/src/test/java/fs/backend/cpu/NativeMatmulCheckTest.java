package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.Buffer;
import fs.backend.Weight;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * fs verify --native's comparison of one matmul: the native kernels against the exact path's product of the same
 * operands are within the int8 bound (the rounding's worst case: with random weights a good part of a typical
 * output), and an exact product with one output moved by the size of the largest is not.
 */
class NativeMatmulCheckTest {
    private static final int K = 512, N = 24, ROWS = 3;

    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#quantized")
    void theNativeProductIsWithinItsInt8BoundAndAWrongOneIsNot(DType type) {
        SplittableRandom random = new SplittableRandom(type.ordinal());
        Tensor tensor = new Tensor("w", type, new long[] {N, K},
                NativeKernelsTest.randomRows(random, type, N, K, Arena.ofAuto()));
        float[] x = new float[ROWS * K];
        for (int i = 0; i < x.length; i++) x[i] = (float) random.nextGaussian();
        NativeMatmulCheck check = NativeMatmulCheck.load();
        try (VectorBackend exact = new VectorBackend(1, CpuKernels.vectorApi())) {
            Weight w = exact.upload(tensor);
            assertTrue(check.covers(w));
            Buffer in = exact.allocate(x.length), out = exact.allocate(ROWS * N);
            MemorySegment.copy(x, 0, ((CpuBuffer) in).segment(), ValueLayout.JAVA_FLOAT, 0, x.length);
            exact.matmul(in, w, out, ROWS);
            NativeMatmulCheck.Result right = check.check(in, w, out, ROWS);
            assertTrue(right.withinBound(), right.toString());
            assertTrue(right.worstRatio() > 0, "the rounding moved something: " + right);

            // A misread block or a wrong scale moves an output by about the size of one: add the largest's.
            MemorySegment values = ((CpuBuffer) out).segment();
            float largest = 0;
            for (int i = 0; i < ROWS * N; i++) largest = Math.max(largest, Math.abs(values.getAtIndex(ValueLayout.JAVA_FLOAT, i)));
            values.setAtIndex(ValueLayout.JAVA_FLOAT, 5, values.getAtIndex(ValueLayout.JAVA_FLOAT, 5) + largest);
            NativeMatmulCheck.Result wrong = check.check(in, w, out, ROWS);
            assertFalse(wrong.withinBound(), wrong.toString());

            values.setAtIndex(ValueLayout.JAVA_FLOAT, 5, Float.NaN);
            assertFalse(check.check(in, w, out, ROWS).withinBound(), "a NaN is never within a bound");
        }
    }
}
