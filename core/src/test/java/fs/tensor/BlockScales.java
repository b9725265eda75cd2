package fs.tensor;

/**
 * Where a block of each quantized format keeps its f16 scales, for the tests that write random blocks: random bytes
 * are a valid block everywhere else, but a random f16 may be infinite or NaN. The one table of format layout the
 * tests keep; a new format that is missing here fails each such test with its name.
 */
public final class BlockScales {
    private BlockScales() {}

    /** Byte offsets in a block of {@code type}'s f16 scales: d, and dmin where it has one. */
    public static long[] halfOffsets(DType type) {
        return switch (type) {
            case Q8_0, Q4_0, IQ2_XXS -> new long[] {0};
            case Q4_K, Q5_K -> new long[] {0, 2};
            case Q6_K -> new long[] {208};
            case Q2_K -> new long[] {80, 82};
            case Q3_K -> new long[] {108};
            default -> throw new IllegalArgumentException("no f16 scale offsets for " + type + " in BlockScales");
        };
    }
}
