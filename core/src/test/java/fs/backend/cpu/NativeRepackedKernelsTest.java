package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.cpu.NativeKernels.Activations;
import fs.backend.cpu.NativeKernels.RepackedRows;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.tensor.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The repacked layouts (Q4_K, Q4_0, Q8_0, Q6_K, Q2_K, Q3_K: 16 rows interleaved) on every variant this CPU runs: the matmul on the repacked
 * rows gives the floats of the matmul on the rows as stored, bit for bit (so whatever NativeKernelsTest proves of
 * one holds of the other), on every such tensor of q-tied's files and on random rows, for 1, 3, 4 and 9 activation
 * rows and for slices of whole groups, writing nothing outside its slice; and the calls are checked.
 */
class NativeRepackedKernelsTest {
    private static final SymbolLookup LIBRARY = NativeLibrary.load(NativeLibrary.bundled());
    /** The formats the library repacks, by the ABI (fscpu.h). */
    private static final List<DType> REPACKED = List.of(DType.Q4_0, DType.Q4_K, DType.Q8_0, DType.Q6_K, DType.Q2_K,
            DType.Q3_K);
    private static final int[] ACTIVATION_ROWS = {1, 3, 4, 9};

    static Stream<Arguments> variantsAndFormats() {
        return NativeKernelsTest.variants().stream().flatMap(isa -> REPACKED.stream().map(t -> Arguments.of(isa, t)));
    }

    @Test
    void theLibraryRepacksQ4KQ40Q80Q6KQ2KAndQ3KAndNoOtherFormat() {
        for (String isa : NativeKernelsTest.variants()) {
            NativeKernels kernels = NativeKernels.bind(LIBRARY, isa);
            Set<DType> repacked = EnumSet.noneOf(DType.class);
            for (DType type : NativeKernelsTest.FORMATS) {
                if (kernels.repacks(type)) repacked.add(type);
                assertEquals(kernels.repacks(type), kernels.repackedBytes(type, 16, 1024) > 0, isa + " " + type);
            }
            assertEquals(Set.copyOf(REPACKED), repacked, isa);
        }
    }

    /** A tensor's rows, all of them repacked, in two calls (groups 0..g/2 and the rest). */
    private static RepackedRows repack(NativeKernels kernels, DType type, MemorySegment w, int rows, int k,
            Arena arena) {
        RepackedRows packed = kernels.allocateRepacked(type, rows, k, arena);
        int groups = rows / NativeKernels.GROUP_ROWS;
        kernels.repack(w, type.rowBytes(k), 0, groups / 2, packed);
        kernels.repack(w, type.rowBytes(k), groups / 2, groups, packed);
        return packed;
    }

    /**
     * The repacked matmul of rows from..to against {@code rows} activation rows, at an output stride wider than the
     * matrix, equals the matmul on the stored rows bit for bit and writes nothing outside the slice.
     */
    private static void checkSlice(NativeKernels kernels, DType type, MemorySegment w, RepackedRows packed, int n,
            int k, byte[] act, int rows, int from, int to, String what) {
        long stride = n + 5;
        float[] expected = new float[(int) (rows * stride)], actual = new float[expected.length];
        Arrays.fill(expected, Float.NaN);
        Arrays.fill(actual, Float.NaN);
        MemorySegment activations = MemorySegment.ofArray(act);
        kernels.matmul(type, w, type.rowBytes(k), from, to, activations, rows, k, MemorySegment.ofArray(expected),
                stride);
        kernels.matmul(packed, from, to, activations, rows, MemorySegment.ofArray(actual), stride);
        assertArrayEquals(expected, actual, what + ", rows " + from + ".." + to + ", " + rows + " activation rows");
    }

    private static byte[] activations(SplittableRandom random, DType type, int rows, int k) {
        float[] x = new float[rows * k];
        for (int i = 0; i < x.length; i++) x[i] = (float) (random.nextGaussian() * Math.exp(random.nextDouble(-4, 4)));
        return Int8Reference.quantize(Activations.of(type), x);
    }

    @ParameterizedTest
    @MethodSource("variantsAndFormats")
    void onRandomRowsTheRepackedMatmulIsTheStoredRowsMatmulBitForBit(String isa, DType type) {
        NativeKernels kernels = NativeKernels.bind(LIBRARY, isa);
        SplittableRandom random = new SplittableRandom(31L * type.ordinal() + isa.hashCode());
        try (Arena arena = Arena.ofConfined()) {
            for (int trial = 0; trial < 12; trial++) {
                int k = 256 * (1 + random.nextInt(6)), n = 16 * (1 + random.nextInt(12));
                MemorySegment w = NativeKernelsTest.randomRows(random, type, n, k, arena);
                RepackedRows packed = repack(kernels, type, w, n, k, arena);
                for (int rows : ACTIVATION_ROWS) {
                    byte[] act = activations(random, type, rows, k);
                    String what = isa + " " + type + " trial " + trial + " [" + n + ", " + k + "]";
                    checkSlice(kernels, type, w, packed, n, k, act, rows, 0, n, what);
                    int from = 16 * random.nextInt(n / 16 + 1), to = from + 16 * random.nextInt((n - from) / 16 + 1);
                    checkSlice(kernels, type, w, packed, n, k, act, rows, from, to, what);
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("variantsAndFormats")
    void onTheQTiedFilesTheRepackedMatmulIsTheStoredRowsMatmulBitForBit(String isa, DType type) {
        NativeKernels kernels = NativeKernels.bind(LIBRARY, isa);
        SplittableRandom random = new SplittableRandom(type.ordinal());
        int checked = 0;
        try (GgufFile gguf = GgufFile.open(QTied.gguf(QTied.fileHolding(type))); Arena arena = Arena.ofConfined()) {
            for (GgufTensor tensor : gguf.tensors()) {
                if (tensor.type() != type) continue;
                int n = (int) tensor.rows(), k = (int) tensor.columns();
                assertEquals(0, n % 16, tensor + ": q-tied's matrices are whole groups");
                RepackedRows packed = repack(kernels, type, tensor.data(), n, k, arena);
                for (int rows : ACTIVATION_ROWS) {
                    byte[] act = activations(random, type, rows, k);
                    checkSlice(kernels, type, tensor.data(), packed, n, k, act, rows, 0, n, isa + " " + tensor);
                    checkSlice(kernels, type, tensor.data(), packed, n, k, act, rows, 16, n - 32, isa + " " + tensor);
                }
                checked++;
            }
        }
        /* the Q2_K file has 8 Q2_K and 6 Q3_K */
        assertTrue(checked >= 6, isa + " " + type + ": " + checked + " tensors");
    }

    /** Calls outside the segments or off the groups are refused before the native code sees them. */
    @Test
    void callsOutsideTheSegmentsOrOffTheGroupsAreRefused() {
        NativeKernels kernels = NativeKernels.bind(LIBRARY, "scalar");
        DType type = DType.Q4_K;
        int n = 32, k = 512;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment w = NativeKernelsTest.randomRows(new SplittableRandom(1), type, n, k, arena);
            RepackedRows packed = kernels.allocateRepacked(type, n, k, arena);
            long rowBytes = type.rowBytes(k);
            assertThrows(IllegalArgumentException.class, () -> kernels.allocateRepacked(type, 24, k, arena));
            assertThrows(IllegalArgumentException.class, () -> kernels.allocateRepacked(DType.Q5_K, n, k, arena));
            assertThrows(IllegalArgumentException.class, () -> kernels.repack(w, rowBytes, 0, 3, packed));
            assertThrows(IllegalArgumentException.class,
                    () -> kernels.repack(w.asSlice(0, 31 * rowBytes), rowBytes, 0, 2, packed));
            assertThrows(IllegalArgumentException.class, () -> kernels.repack(w, rowBytes + 1, 0, 2, packed));
            kernels.repack(w, rowBytes, 0, 2, packed);
            byte[] act = activations(new SplittableRandom(2), type, 2, k);
            MemorySegment a = MemorySegment.ofArray(act), out = MemorySegment.ofArray(new float[2 * n]);
            assertThrows(IllegalArgumentException.class, () -> kernels.matmul(packed, 8, 32, a, 2, out, n));
            assertThrows(IllegalArgumentException.class, () -> kernels.matmul(packed, 0, 48, a, 2, out, 48));
            assertThrows(IllegalArgumentException.class, () -> kernels.matmul(packed, 0, 32, a, 3, out, n));
            assertThrows(IllegalArgumentException.class,
                    () -> kernels.matmul(packed, 0, 32, a, 2, out.asSlice(0, 4L * (2 * n - 1)), n));
            kernels.matmul(packed, 0, 32, a, 2, out, n);
        }
    }
}
