package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.format.ReferenceDequantizer;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.safetensors.SafetensorsFile;
import fs.tensor.BlockScales;
import fs.tensor.DType;
import fs.tensor.FormatSources;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The row readers of every quantized format against the reference decoder and llama.cpp's references, on every tensor
 * of models/q-tied that uses them and on random blocks.
 *
 * <p>A dot product's tolerance: its weights are exact, so its float32 result differs from the exact Σ w·x only by the
 * rounding of its additions (an FMA does not round the product). Any order of summing k terms is within
 * (k − 1)·2^-24·Σ|w·x| of the exact sum (to first order), so k·2^-24·Σ|w·x| bounds it. That is far tighter than
 * the effect of one weight off by one quant step, about |x| times the group's scale.
 */
class QuantRowFormatsTest {
    /** The q-tied files that hold them. */
    private static final List<String> FILES = QTied.quantizedFiles();
    /** Where the kernels read x and write rows in their arrays: not 0 and not a multiple of a vector. */
    private static final int OFFSET = 5;

    private static float[] reference(GgufTensor tensor, long row) {
        float[] out = new float[(int) tensor.columns()];
        ReferenceDequantizer.decode(tensor.type(), tensor.row(row), out);
        return out;
    }

    private static float[] dequantized(RowFormat format, MemorySegment w, long rowOffset, int k) {
        float[] out = new float[OFFSET + k + OFFSET];
        format.dequantize(w, rowOffset, k, out, OFFSET);
        return java.util.Arrays.copyOfRange(out, OFFSET, OFFSET + k);
    }

    private static float dot(RowFormat format, MemorySegment w, long rowOffset, float[] x) {
        float[] shifted = new float[OFFSET + x.length];
        System.arraycopy(x, 0, shifted, OFFSET, x.length);
        return format.dot(w, rowOffset, shifted, OFFSET, x.length, new float[MatmulKernels.LANES_SCRATCH]);
    }

    private static void assertBitExact(float[] expected, float[] actual, String what) {
        for (int c = 0; c < expected.length; c++) {
            if (Float.floatToRawIntBits(expected[c]) != Float.floatToRawIntBits(actual[c])) {
                throw new AssertionError(what + " column " + c + ": expected " + expected[c] + ", got " + actual[c]);
            }
        }
    }

    /** Asserts that dot is within k·2^-24·Σ|w·x| of {@code exact}, the float64 Σ w·x of the exact row w. */
    private static void assertDotClose(double exact, float[] w, float[] x, float dot, String what) {
        double magnitude = 0;
        for (int c = 0; c < w.length; c++) magnitude += Math.abs((double) w[c] * x[c]);
        double bound = w.length * 0x1p-24 * magnitude;
        if (!(Math.abs(dot - exact) <= bound)) {
            throw new AssertionError(what + ": dot " + dot + ", exact " + exact + ", off by " + Math.abs(dot - exact)
                    + " > " + bound);
        }
    }

    private static double exactDot(float[] w, float[] x) {
        double sum = 0;
        for (int c = 0; c < w.length; c++) sum += (double) w[c] * x[c];
        return sum;
    }

    @ParameterizedTest
    @FieldSource("FILES")
    void everyRowDequantizesToTheReferenceAndTheSampledRowsToLlamaCppsFloats(String fileType) {
        try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType));
                SafetensorsFile samples = SafetensorsFile.open(QTied.samples(fileType))) {
            int tensors = 0;
            for (GgufTensor tensor : gguf.tensors()) {
                if (!tensor.type().isQuantized()) continue;
                RowFormat format = RowFormats.of(tensor.type()).orElseThrow();
                int k = (int) tensor.columns();
                for (long r = 0; r < tensor.rows(); r++) {
                    assertBitExact(reference(tensor, r), dequantized(format, tensor.data(), r * tensor.rowBytes(), k),
                            tensor + " row " + r);
                }
                QTied.Sample sample = QTied.Sample.of(samples, tensor.name());
                for (int i = 0; i < sample.rowIds().length; i++) {
                    long r = sample.rowIds()[i];
                    assertBitExact(sample.rows()[i], dequantized(format, tensor.data(), r * tensor.rowBytes(), k),
                            tensor + " sampled row " + r);
                }
                tensors++;
            }
            assertTrue(tensors > 0, fileType + " has no tensor of these formats");
        }
    }

    @ParameterizedTest
    @FieldSource("FILES")
    void everyRowsDotWithTheSampleInputIsLlamaCppsFloat64ProductToFloat32Rounding(String fileType) {
        try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType));
                SafetensorsFile samples = SafetensorsFile.open(QTied.samples(fileType))) {
            for (GgufTensor tensor : gguf.tensors()) {
                if (!tensor.type().isQuantized()) continue;
                RowFormat format = RowFormats.of(tensor.type()).orElseThrow();
                QTied.Sample sample = QTied.Sample.of(samples, tensor.name());
                for (long r = 0; r < tensor.rows(); r++) {
                    float dot = dot(format, tensor.data(), r * tensor.rowBytes(), sample.x());
                    assertDotClose(sample.matvec()[(int) r], reference(tensor, r), sample.x(), dot,
                            tensor + " row " + r);
                }
            }
        }
    }

    @Test
    void theFilesHoldEveryFormat() {
        Set<DType> seen = EnumSet.noneOf(DType.class);
        for (String fileType : FILES) {
            try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType))) {
                for (GgufTensor tensor : gguf.tensors()) seen.add(tensor.type());
            }
        }
        assertTrue(seen.containsAll(FormatSources.quantized()), "types seen: " + seen);
    }

    /**
     * Random bytes in every field (scales, mins, quants, grid indices, signs; f16 scales drawn as normal halves of
     * either sign) and random inputs, over rows of 1 to 12 blocks at a row offset inside a larger segment.
     */
    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#quantized")
    void randomBlocksDequantizeExactlyAndTheirDotIsTheExactProductToFloat32Rounding(DType type) {
        RowFormat format = RowFormats.of(type).orElseThrow();
        SplittableRandom random = new SplittableRandom(type.ordinal());
        try (Arena arena = Arena.ofConfined()) {
            for (int trial = 0; trial < 200; trial++) {
                int k = type.blockElements() * (1 + random.nextInt(12));
                long rowOffset = 1 + random.nextInt(100);
                MemorySegment w = arena.allocate(rowOffset + type.rowBytes(k));
                for (long i = 0; i < w.byteSize(); i++) w.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt(256));
                for (long block = 0; block < k / type.blockElements(); block++) {
                    for (long field : BlockScales.halfOffsets(type)) {
                        float scale = (float) ((random.nextBoolean() ? 1 : -1) * Math.exp(random.nextDouble(-8, 3)));
                        w.set(ValueLayout.JAVA_SHORT_UNALIGNED, rowOffset + block * type.blockBytes() + field,
                                Float.floatToFloat16(scale));
                    }
                }
                float[] expected = new float[k];
                ReferenceDequantizer.decode(type, w.asSlice(rowOffset), expected);
                assertBitExact(expected, dequantized(format, w, rowOffset, k), type + " trial " + trial);
                float[] x = new float[k];
                for (int c = 0; c < k; c++) x[c] = (float) random.nextGaussian();
                assertDotClose(exactDot(expected, x), expected, x, dot(format, w, rowOffset, x), type + " trial " + trial);
            }
        }
    }
}
