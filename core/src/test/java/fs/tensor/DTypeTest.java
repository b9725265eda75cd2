package fs.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class DTypeTest {
    @Test
    void rowsAreWholeBlocks() {
        assertEquals(4 * 4096, DType.F32.rowBytes(4096));
        assertEquals(2 * 4096, DType.BF16.rowBytes(4096));
        assertEquals(4096 / 32 * 34, DType.Q8_0.rowBytes(4096));
        assertEquals(4096 / 256 * 66, DType.IQ2_XXS.rowBytes(4096));
        assertEquals(0, DType.Q4_K.rowBytes(0));
        assertThrows(IllegalArgumentException.class, () -> DType.Q4_K.rowBytes(4096 + 32));
        assertThrows(IllegalArgumentException.class, () -> DType.F32.rowBytes(-1));
        assertThrows(ArithmeticException.class, () -> DType.F32.rowBytes(Long.MAX_VALUE));
    }

    @Test
    void ggmlIdsRoundTripAndOtherGgmlTypesAreKnownByName() {
        for (DType type : DType.ggmlTypes()) {
            assertEquals(type, DType.fromGgmlId(type.ggmlId()).orElseThrow());
            assertEquals(type.name(), DType.ggmlNameOf(type.ggmlId()));
        }
        assertTrue(DType.fromGgmlId(21).isEmpty());
        assertEquals("IQ3_S", DType.ggmlNameOf(21));
        assertEquals("MXFP4", DType.ggmlNameOf(39));
        assertEquals("unknown type 4", DType.ggmlNameOf(4)); // Q4_2, retired before GGUF existed
        assertEquals("unknown type 18446744073709551615", DType.ggmlNameOf(-1));
        assertEquals("I32", DType.ggmlNameOf(26)); // a safetensors dtype too, but not a ggml type fs reads
        assertTrue(DType.fromGgmlId(26).isEmpty());
    }

    @Test
    void eachFileFormatDeclaresOnlyItsOwnTypes() {
        assertEquals(DType.BF16, DType.fromSafetensorsName("BF16").orElseThrow());
        assertEquals(DType.I64, DType.fromSafetensorsName("I64").orElseThrow());
        assertTrue(DType.fromSafetensorsName("Q8_0").isEmpty(), "a safetensors header cannot declare Q8_0");
        assertTrue(DType.fromSafetensorsName("bf16").isEmpty());
        assertEquals(DType.Q8_0, DType.fromGgmlId(8).orElseThrow());
        assertEquals(DType.F32, DType.fromGgmlId(0).orElseThrow());
    }

    @Test
    void aTensorHoldsRowsTimesRowBytes() {
        MemorySegment none = MemorySegment.NULL;
        assertEquals(3 * 2 * 34, new Tensor("q", DType.Q8_0, new long[] {3, 64}, none).byteSize());
        assertEquals(5 * 4 * 18, new Tensor("q", DType.Q4_0, new long[] {5, 4, 32}, none).byteSize());
        assertEquals(2 * 7, new Tensor("v", DType.BF16, new long[] {7}, none).byteSize());
        assertEquals(4, new Tensor("s", DType.F32, new long[] {}, none).byteSize());
        assertThrows(IllegalArgumentException.class, () -> new Tensor("q", DType.Q4_0, new long[] {2, 48}, none).byteSize());
    }
}
