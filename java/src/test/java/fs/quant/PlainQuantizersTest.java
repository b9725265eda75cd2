package fs.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class PlainQuantizersTest {
    private static final ValueLayout.OfShort HALF = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static short bf16Of(int floatBits) {
        return PlainQuantizers.bf16(Float.intBitsToFloat(floatBits));
    }

    @Test
    void bf16RoundsToNearestTiesToEvenAndKeepsNaNsQuiet() {
        assertEquals((short) 0x3f80, bf16Of(0x3f800000)); // 1.0 exactly
        assertEquals((short) 0x3f80, bf16Of(0x3f808000)); // a tie: down to the even 0x3f80
        assertEquals((short) 0x3f82, bf16Of(0x3f818000)); // a tie: up to the even 0x3f82
        assertEquals((short) 0x3f81, bf16Of(0x3f808001)); // just above the tie
        assertEquals((short) 0x7f80, bf16Of(0x7f7fffff)); // the largest float rounds to infinity, as ggml's does
        assertEquals((short) 0x7fc0, bf16Of(0x7f800001)); // a signalling NaN comes out quiet
        assertEquals((short) 0xffc1, bf16Of(0xffc10000));
    }

    /** Every bf16 and every finite f16 value, widened to float and written back, is the same bits. */
    @Test
    void plainValuesRoundTripThroughTheirFormats() {
        float[] weights = new float[65536];
        for (DType type : new DType[] {DType.BF16, DType.F16}) {
            MemorySegment in = MemorySegment.ofArray(new byte[2 * 65536]);
            for (int i = 0; i < 65536; i++) in.set(HALF, 2L * i, (short) i);
            ReferenceDequantizer.decode(type, in, weights);
            MemorySegment out = MemorySegment.ofArray(new byte[2 * 65536 + 6]);
            PlainQuantizers.of(type).orElseThrow().quantize(weights, 256, 256, null, out, 6);
            for (int i = 0; i < 65536; i++) {
                if (Float.isNaN(weights[i])) continue;
                assertEquals((short) i, out.get(HALF, 6 + 2L * i), type + " " + Integer.toHexString(i));
            }
        }
        MemorySegment out = MemorySegment.ofArray(new byte[4 * 3]);
        PlainQuantizers.F32.quantize(new float[] {1.5f, -0f, Float.MIN_VALUE}, 1, 3, null, out, 0);
        float[] back = new float[3];
        ReferenceDequantizer.decode(DType.F32, out, back);
        assertEquals(Float.floatToRawIntBits(-0f), Float.floatToRawIntBits(back[1]));
        assertEquals(Float.MIN_VALUE, back[2]);
        assertEquals(1.5f, back[0]);
        assertTrue(PlainQuantizers.of(DType.Q4_K).isEmpty());
    }

    @Test
    void f16RoundsToNearestEven() {
        MemorySegment out = MemorySegment.ofArray(new byte[6]);
        // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): down to 1 (0x3c00); 1 + 3·2^-11 up to 0x3c02
        PlainQuantizers.F16.quantize(new float[] {1 + 0x1p-11f, 1 + 3 * 0x1p-11f, 65520f}, 1, 3, null, out, 0);
        assertEquals((short) 0x3c00, out.get(HALF, 0));
        assertEquals((short) 0x3c02, out.get(HALF, 2));
        assertEquals((short) 0x7c00, out.get(HALF, 4)); // past the largest half: infinity
    }
}
