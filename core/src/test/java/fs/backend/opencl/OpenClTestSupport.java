package fs.backend.opencl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;

/** What the OpenCL tests share: the device (CI installs PoCL, so none is a failure) and random weights. */
final class OpenClTestSupport {
    private OpenClTestSupport() {}

    /** The device the tests run on: a GPU if there is one, else PoCL's CPU device. Fails when there is none. */
    static OpenCl.Device device() {
        return switch (OpenCl.select(true, null)) {
            case OpenCl.Selection.Selected s -> s.device();
            case OpenCl.Selection.NotSelected n -> fail("OpenCL tests need a device (CI installs PoCL): " + n.reason());
        };
    }

    static float[] random(Random random, int length) {
        float[] values = new float[length];
        for (int i = 0; i < length; i++) values[i] = (float) random.nextGaussian();
        return values;
    }

    /** A tensor of {@code values} stored as {@code dtype}; {@code values} becomes what the stored bits decode to. */
    static Tensor tensor(String name, DType dtype, float[] values, Arena arena, long... shape) {
        MemorySegment data = arena.allocate((long) values.length * dtype.blockBytes(), 16);
        for (int i = 0; i < values.length; i++) {
            switch (dtype) {
                case F32 -> data.setAtIndex(ValueLayout.JAVA_FLOAT, i, values[i]);
                case F16 -> {
                    short bits = Float.floatToFloat16(values[i]);
                    data.setAtIndex(ValueLayout.JAVA_SHORT, i, bits);
                    values[i] = Float.float16ToFloat(bits);
                }
                case BF16 -> {
                    int bits = Float.floatToRawIntBits(values[i]) >>> 16;
                    data.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) bits);
                    values[i] = Float.intBitsToFloat(bits << 16);
                }
                default -> throw new IllegalArgumentException(dtype.toString());
            }
        }
        return new Tensor(name, dtype, shape, data);
    }

    /**
     * Normalized mean squared error Σ(a − e)² / Σe² of {@code actual} against {@code expected} (llama.cpp
     * test-backend-ops' metric) is at most {@code limit}.
     */
    static void assertNmse(float[] expected, float[] actual, double limit, String what) {
        assertEquals(expected.length, actual.length, what + ": length");
        double error = 0;
        double norm = 0;
        for (int i = 0; i < expected.length; i++) {
            double difference = (double) actual[i] - expected[i];
            error += difference * difference;
            norm += (double) expected[i] * expected[i];
        }
        assertTrue(norm > 0, what + ": the expected values are all zero");
        double nmse = error / norm;
        assertTrue(nmse <= limit, what + ": NMSE " + nmse + " > " + limit);
    }
}
