package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import fs.backend.cpu.NativeKernels.Activations;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * libfscpu's float matmuls (BF16, F16, F32 weights), every variant this CPU runs (on AVX512-BF16 its avx512 variant
 * is vdpbf16ps itself), against {@link FloatMatmulReference}: every output float bit for bit (any NaN equals any
 * NaN: payloads are not part of the contract), on ordinary rows at k = 1024 and an odd k, and BF16 lane by lane on
 * the values where its rounding, DAZ and FTZ show.
 */
class NativeFloatMatmulTest {
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final SymbolLookup LIBRARY = NativeLibrary.load(NativeLibrary.bundled());
    private static final List<DType> FORMATS = List.of(DType.BF16, DType.F16, DType.F32);

    static Stream<Arguments> variantsAndFormats() {
        return NativeKernels.runnable(LIBRARY).stream().flatMap(isa -> FORMATS.stream().map(t -> Arguments.of(isa, t)));
    }

    static List<String> variants() {
        return NativeKernels.runnable(LIBRARY);
    }

    /** Activations and weights of a model's size (Gaussian, a few large), converted by the variant itself. */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("variantsAndFormats")
    void everyOutputIsTheReferencesBitForBit(String isa, DType type) {
        NativeKernels kernels = NativeKernels.bind(LIBRARY, isa);
        Activations format = Activations.of(type);
        SplittableRandom random = new SplittableRandom(type.ordinal());
        for (int k : new int[] {1024, 83}) {
            // 67 weight rows and 7 input rows: a kernel's tiles of four of each, and what is left over of both;
            // then the first input row alone (decode's kernel)
            int n = 67, rows = 7;
            float[] x = new float[rows * k], weights = new float[n * k];
            for (int i = 0; i < x.length; i++) x[i] = (float) (random.nextGaussian() * (i % 97 == 0 ? 40 : 1));
            for (int i = 0; i < weights.length; i++) weights[i] = (float) (random.nextGaussian() * 0.05);
            byte[] act = new byte[(int) format.rowBytes(rows * k)];
            kernels.quantize(format, MemorySegment.ofArray(x), MemorySegment.ofArray(act), x.length);
            MemorySegment w = MemorySegment.ofArray(FloatMatmulReference.convert(format, weights));
            check(kernels, type, w, n, act, rows, k, isa + " " + type + " k = " + k);
            check(kernels, type, w, n, act, 1, k, isa + " " + type + " k = " + k + ", one input row");
        }
    }

    /**
     * BF16 rows of k = 130, zero but at 0, 1 and 128, 129 (lane 0 of chunks 0 and 4), so each output is one lane's
     * four steps: bf16 near 2^-63 (products and sums about 2^-126: FTZ), denormals (DAZ), huge and ordinary ones;
     * and the sum 2^-126 − 2^-150, which rounds to 2^-126 on the denormal grid but is tiny after rounding: zero.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void bf16LanesRoundAndFlushAsVdpbf16ps(String isa) {
        NativeKernels kernels = NativeKernels.bind(LIBRARY, isa);
        SplittableRandom random = new SplittableRandom(11);
        int k = 130, n = 2048, rows = 6;
        int[] at = {0, 1, 128, 129};
        for (int pass = 0; pass < 4; pass++) {
            MemorySegment w = MemorySegment.ofArray(new byte[2 * n * k]);
            byte[] act = new byte[2 * rows * k];
            MemorySegment a = MemorySegment.ofArray(act);
            for (int i = 0; i < n; i++) for (int j : at) w.set(I16, 2L * (i * k + j), edgeBf16(random));
            for (int r = 0; r < rows; r++) for (int j : at) a.set(I16, 2L * (r * k + j), edgeBf16(random));
            if (pass == 0) { // odd pair 2^-63·2^-63, then even −2^-75·2^-75
                w.set(I16, 0, (short) 0x9A00);
                w.set(I16, 2, (short) 0x2000);
                a.set(I16, 0, (short) 0x1A00);
                a.set(I16, 2, (short) 0x2000);
                for (int j : new int[] {128, 129}) {
                    w.set(I16, 2L * j, (short) 0);
                    a.set(I16, 2L * j, (short) 0);
                }
            }
            float[] out = check(kernels, DType.BF16, w, n, act, rows, k, isa + " bf16 lanes, pass " + pass);
            if (pass == 0) assertEquals(0f, out[0], isa + ": 2^-126 − 2^-150 is flushed");
            out = check(kernels, DType.BF16, w, n, act, 1, k, isa + " bf16 lanes, one input row, pass " + pass);
            if (pass == 0) assertEquals(0f, out[0], isa + ": 2^-126 − 2^-150 is flushed, one input row");
        }
    }

    private static short edgeBf16(SplittableRandom random) {
        int exponent = switch (random.nextInt(8)) {
            case 0 -> 0;
            case 1 -> 190 + random.nextInt(65);
            case 2 -> 100 + random.nextInt(40);
            default -> 56 + random.nextInt(16);
        };
        return (short) ((random.nextInt() & 0x807F) | exponent << 7);
    }

    /**
     * The whole matmul and slices from rows 1 and 5 (of 67: a decode's tiles of 8, 4 and single weight rows) against
     * the reference; returns the whole one's outputs.
     */
    private static float[] check(NativeKernels kernels, DType type, MemorySegment w, int n, byte[] act, int rows,
            int k, String what) {
        Activations format = Activations.of(type);
        long rowBytes = type.rowBytes(k);
        float[] out = new float[rows * n];
        kernels.matmul(type, w, rowBytes, 0, n, MemorySegment.ofArray(act), rows, k, MemorySegment.ofArray(out), n);
        for (int from : new int[] {1, 5}) {
            float[] slice = new float[rows * n];
            kernels.matmul(type, w, rowBytes, from, n, MemorySegment.ofArray(act), rows, k,
                    MemorySegment.ofArray(slice), n);
            for (int r = 0; r < rows; r++) {
                for (int i = 0; i < n; i++) {
                    float expected = FloatMatmulReference.dot(format, w, i * rowBytes, act, r * format.rowBytes(k), k);
                    if (from == 1) assertSame(expected, out[r * n + i], what + ", row " + r + ", output " + i);
                    assertSame(i < from ? 0f : expected, slice[r * n + i],
                            what + ", the slice from " + from + ", row " + r + ", output " + i);
                }
            }
        }
        return out;
    }

    private static void assertSame(float expected, float actual, String what) {
        if (Float.isNaN(expected) && Float.isNaN(actual)) return;
        assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(actual),
                () -> what + ": " + Float.toHexString(actual) + ", the reference's " + Float.toHexString(expected));
    }
}
