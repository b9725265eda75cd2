package fs.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.safetensors.SafetensorsFile;
import fs.tensor.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.FieldSource;

class ReferenceDequantizerTest {
    private static final java.util.List<String> TYPES = QTied.TYPES;

    private static float[] decodeRow(GgufTensor tensor, long row) {
        float[] out = new float[(int) tensor.columns()];
        ReferenceDequantizer.decode(tensor.type(), tensor.row(row), out);
        return out;
    }

    @ParameterizedTest
    @FieldSource("TYPES")
    void everySampledRowOfEveryTensorDecodesToLlamaCppsFloatsBitForBit(String fileType) {
        try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType));
                SafetensorsFile samples = SafetensorsFile.open(QTied.samples(fileType))) {
            int rowsChecked = 0;
            for (GgufTensor tensor : gguf.tensors()) {
                QTied.Sample sample = QTied.Sample.of(samples, tensor.name());
                assertEquals(sample.typeId(), tensor.type().ggmlId(), tensor.name());
                for (int i = 0; i < sample.rowIds().length; i++) {
                    float[] expected = sample.rows()[i];
                    float[] actual = decodeRow(tensor, sample.rowIds()[i]);
                    for (int c = 0; c < expected.length; c++) {
                        if (Float.floatToRawIntBits(expected[c]) != Float.floatToRawIntBits(actual[c])) {
                            throw new AssertionError(tensor + " row " + sample.rowIds()[i] + " column " + c
                                    + ": expected " + expected[c] + ", decoded " + actual[c]);
                        }
                    }
                    rowsChecked++;
                }
            }
            assertTrue(rowsChecked > 60, "rows checked: " + rowsChecked);
        }
    }

    /**
     * W·x over every row, in float64 from our float32 rows, against the reference's float64 W·x of its float32 rows.
     * Both sum the same exact products (a float32 × float32 product is exact in float64); only the order of the
     * additions may differ, and two orders of k additions differ by at most 2·(k-1)·2^-53·Σ|w·x| (each is within
     * (k-1)·u·Σ|w·x| of the exact sum, u = 2^-53). One float32 weight off by one ulp moves its term by about
     * 2^-24·|w·x|, far more than that bound for rows of 128-768 elements, so this checks the rows not sampled too
     * (the IQ2_XXS file uses all 256 points of its grid, so it checks the whole transcribed table).
     */
    @ParameterizedTest
    @FieldSource("TYPES")
    void theFloat64ProductOfEveryRowMatchesTheReferenceToRoundingOfTheSum(String fileType) {
        try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType));
                SafetensorsFile samples = SafetensorsFile.open(QTied.samples(fileType))) {
            for (GgufTensor tensor : gguf.tensors()) {
                QTied.Sample sample = QTied.Sample.of(samples, tensor.name());
                assertEquals(tensor.rows(), sample.matvec().length, tensor.name());
                float[] x = sample.x();
                for (int r = 0; r < tensor.rows(); r++) {
                    float[] w = decodeRow(tensor, r);
                    double sum = 0;
                    double magnitude = 0;
                    for (int c = 0; c < w.length; c++) {
                        double product = (double) w[c] * x[c];
                        sum += product;
                        magnitude += Math.abs(product);
                    }
                    double bound = 2.0 * (w.length - 1) * 0x1p-53 * magnitude;
                    double error = Math.abs(sum - sample.matvec()[r]);
                    if (error > bound) {
                        throw new AssertionError(tensor + " row " + r + ": W·x " + sum + ", reference "
                                + sample.matvec()[r] + ", off by " + error + " > " + bound);
                    }
                }
            }
        }
    }

    @Test
    void theFilesCoverEveryQuantizedTypeFsReads() {
        Set<DType> seen = EnumSet.noneOf(DType.class);
        for (String fileType : TYPES) {
            try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType))) {
                for (GgufTensor tensor : gguf.tensors()) seen.add(tensor.type());
            }
        }
        // F16 is the one type no llama.cpp preset wrote here; f16ElementsAreIeeeHalves covers it.
        Set<DType> ggmlTypes = EnumSet.copyOf(DType.ggmlTypes());
        ggmlTypes.remove(DType.F16);
        assertEquals(ggmlTypes, seen);
    }

    @Test
    void f16ElementsAreIeeeHalves() {
        short[] halves = {0x3C00, (short) 0xC000, 0x0001, 0x7BFF, (short) 0x8000, 0x3555};
        float[] expected = {1f, -2f, 0x1p-24f, 65504f, -0f, 0.33325195f};
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = arena.allocate(2L * halves.length);
            for (int i = 0; i < halves.length; i++) {
                bytes.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 2L * i, halves[i]);
            }
            float[] out = new float[halves.length];
            ReferenceDequantizer.decode(DType.F16, bytes, out);
            for (int i = 0; i < out.length; i++) {
                assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(out[i]), "half " + i);
            }
        }
    }

    @Test
    void theIq2XxsGridHas256DistinctAscendingPointsOfTheThreeMagnitudes() {
        Set<Long> points = new HashSet<>();
        long previous = 0;
        for (int i = 0; i < 256; i++) {
            long point = Iq2XxsTables.gridPoint(i);
            for (int j = 0; j < 8; j++) {
                long magnitude = point >>> 8 * j & 0xFF;
                assertTrue(magnitude == 0x08 || magnitude == 0x19 || magnitude == 0x2b, "point " + i + " byte " + j);
            }
            assertTrue(i == 0 || point > previous, "ascending at " + i);
            previous = point;
            points.add(point);
        }
        assertEquals(256, points.size());
        // ggml's first and last entries, as a spot check of the ends.
        assertEquals(0x0808080808080808L, Iq2XxsTables.gridPoint(0));
        assertEquals(0x2b2b2b1908081908L, Iq2XxsTables.gridPoint(255));
    }

    @Test
    void iq2XxsSignsCompleteSevenBitsToAnEvenCountOfMinusSigns() {
        for (int bits = 0; bits < 128; bits++) {
            int signs = Iq2XxsTables.signs(bits);
            assertEquals(bits, signs & 0x7F);
            assertEquals(0, Integer.bitCount(signs) % 2, "entry " + bits);
        }
        // ggml's ksigns_iq2xs begins 0, 129, 130, 3, 132 and ends 255.
        assertEquals(129, Iq2XxsTables.signs(1));
        assertEquals(3, Iq2XxsTables.signs(3));
        assertEquals(255, Iq2XxsTables.signs(127));
    }

    /** decodes answers for the decoder: a type it names decodes a (zeroed) block, any other type is refused. */
    @ParameterizedTest
    @EnumSource(DType.class)
    void decodesNamesExactlyTheTypesWithADecoding(DType type) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment block = arena.allocate(type.blockBytes());
            float[] out = new float[type.blockElements()];
            if (ReferenceDequantizer.decodes(type)) {
                ReferenceDequantizer.decode(type, block, out);
                for (float value : out) assertTrue(value == 0, type + " decodes a zeroed block to " + value);
            } else {
                assertThrows(IllegalArgumentException.class, () -> ReferenceDequantizer.decode(type, block, out));
            }
        }
    }

    @Test
    void refusesPartialBlocksAndTooFewBytes() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment block = arena.allocate(DType.Q4_K.blockBytes());
            assertThrows(IllegalArgumentException.class,
                    () -> ReferenceDequantizer.decode(DType.Q4_K, block, new float[128]));
            assertThrows(IllegalArgumentException.class,
                    () -> ReferenceDequantizer.decode(DType.Q4_K, block, new float[512]));
        }
    }
}
