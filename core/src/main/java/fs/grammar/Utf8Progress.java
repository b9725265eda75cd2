package fs.grammar;

/**
 * A UTF-8 sequence read in part, packed in an int: the code point bits so far, how many bytes are still to come, and
 * the sequence's length. Tokens end in the middle of characters; the matcher checks each byte against the code
 * points it could still begin.
 */
final class Utf8Progress {
    private static final int[] MIN_BY_LENGTH = {0, 0, 0x80, 0x800, 0x10000};
    /** In place of the bits: every continuation completes a member of the set, whatever it is. */
    private static final int ANY = 1 << 23;

    private Utf8Progress() {}

    /** The progress after a first byte {@code b} (0x80 and up), or -1 if no valid sequence starts so. */
    static int lead(int b) {
        int length;
        if (b >= 0xC0 && b < 0xE0) length = 2;
        else if (b >= 0xE0 && b < 0xF0) length = 3;
        else if (b >= 0xF0 && b < 0xF8) length = 4;
        else return -1;
        return pack(b & (0x7F >> length), length - 1, length);
    }

    /** The progress after continuation byte {@code b}, or -1 if {@code b} cannot continue a sequence. */
    static int next(int progress, int b) {
        if ((b & 0xC0) != 0x80) return -1;
        if (bits(progress) == ANY) return pack(ANY, remaining(progress) - 1, length(progress));
        return pack(bits(progress) << 6 | (b & 0x3F), remaining(progress) - 1, length(progress));
    }

    /**
     * The same progress, or, when every way to complete it gives a valid code point of {@code set}, the progress that
     * forgets which bits were read: the matcher then has one state where it would have had one per prefix.
     */
    static int normalize(int progress, CodePointSet set) {
        if (bits(progress) == ANY) return progress;
        int shift = 6 * remaining(progress);
        int lo = bits(progress) << shift;
        int hi = lo | ((1 << shift) - 1);
        boolean allValid = lo >= MIN_BY_LENGTH[length(progress)] && hi <= CodePointSet.MAX && (hi < 0xD800 || lo > 0xDFFF);
        return allValid && set.containsAll(lo, hi) ? pack(ANY, remaining(progress), length(progress)) : progress;
    }

    /** Whether the complete sequence is a member of {@code set}. */
    static boolean completesIn(int progress, CodePointSet set) {
        if (bits(progress) == ANY) return true;
        int c = codePoint(progress);
        return c >= 0 && set.contains(c);
    }

    static boolean complete(int progress) {
        return remaining(progress) == 0;
    }

    /** The code point of a complete sequence, -1 if overlong or beyond U+10FFFF. */
    private static int codePoint(int progress) {
        int c = bits(progress);
        return c >= MIN_BY_LENGTH[length(progress)] && c <= CodePointSet.MAX ? c : -1;
    }

    /** Whether some code point of {@code set} can still come of this incomplete sequence. */
    static boolean possible(int progress, CodePointSet set) {
        if (bits(progress) == ANY) return true;
        int shift = 6 * remaining(progress);
        int lo = Math.max(bits(progress) << shift, MIN_BY_LENGTH[length(progress)]);
        int hi = Math.min(bits(progress) << shift | ((1 << shift) - 1), CodePointSet.MAX);
        return lo <= hi && set.intersects(lo, hi);
    }

    private static int pack(int bits, int remaining, int length) {
        return length << 28 | remaining << 24 | bits;
    }

    private static int bits(int progress) {
        return progress & 0xFFFFFF;
    }

    private static int remaining(int progress) {
        return progress >>> 24 & 0xF;
    }

    private static int length(int progress) {
        return progress >>> 28;
    }
}
