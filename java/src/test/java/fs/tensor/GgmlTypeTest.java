package fs.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class GgmlTypeTest {
    @Test
    void rowsAreWholeBlocks() {
        assertEquals(4 * 4096, GgmlType.F32.rowBytes(4096));
        assertEquals(2 * 4096, GgmlType.BF16.rowBytes(4096));
        assertEquals(4096 / 32 * 34, GgmlType.Q8_0.rowBytes(4096));
        assertEquals(4096 / 256 * 66, GgmlType.IQ2_XXS.rowBytes(4096));
        assertEquals(0, GgmlType.Q4_K.rowBytes(0));
        assertThrows(IllegalArgumentException.class, () -> GgmlType.Q4_K.rowBytes(4096 + 32));
        assertThrows(IllegalArgumentException.class, () -> GgmlType.F32.rowBytes(-1));
        assertThrows(ArithmeticException.class, () -> GgmlType.F32.rowBytes(Long.MAX_VALUE));
    }

    @Test
    void idsRoundTripAndOtherGgmlTypesAreKnownByName() {
        for (GgmlType type : GgmlType.values()) {
            assertEquals(type, GgmlType.byId(type.id()).orElseThrow());
            assertEquals(type.name(), GgmlType.nameOf(type.id()));
        }
        assertTrue(GgmlType.byId(21).isEmpty());
        assertEquals("IQ3_S", GgmlType.nameOf(21));
        assertEquals("MXFP4", GgmlType.nameOf(39));
        assertEquals("unknown type 4", GgmlType.nameOf(4)); // Q4_2, retired before GGUF existed
        assertEquals("unknown type 18446744073709551615", GgmlType.nameOf(-1));
    }
}
