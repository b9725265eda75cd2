package fs.tokenizer;

/**
 * UTF-8 decoding with Rust's {@code String::from_utf8_lossy} rules, which Hugging Face's decoder uses: each maximal
 * prefix of a valid sequence that is cut short becomes one U+FFFD, and a byte that cannot start a sequence becomes one
 * U+FFFD. Java's own decoder groups invalid bytes differently, hence this class.
 */
final class Utf8 {
    private Utf8() {}

    static String decodeLossy(byte[] bytes, int length) {
        // Valid UTF-8, the usual case, reads the same either way, and Java's decoder is much faster.
        try {
            return java.nio.charset.StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes, 0, length))
                    .toString();
        } catch (java.nio.charset.CharacterCodingException invalid) {
            // fall through to the exact replacement rules
        }
        StringBuilder out = new StringBuilder(length);
        decode(bytes, length, out, true);
        return out.toString();
    }

    /**
     * Appends the text of {@code bytes[0, length)} and returns how many bytes it consumed. When {@code atEnd} is false
     * it stops before a trailing sequence that later bytes could still complete, so that a stream is decoded exactly
     * as its concatenation would be.
     */
    static int decode(byte[] bytes, int length, StringBuilder out, boolean atEnd) {
        int i = 0;
        while (i < length) {
            int b = bytes[i] & 0xFF;
            if (b < 0x80) {
                out.append((char) b);
                i++;
                continue;
            }
            int width = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
            if (width == 0) {
                out.append('\uFFFD');
                i++;
                continue;
            }
            int valid = 1; // bytes of the sequence that are valid so far
            while (valid < width && i + valid < length && continues(b, valid, bytes[i + valid] & 0xFF)) valid++;
            if (valid == width) {
                int codePoint = b & (0xFF >> (width + 1));
                for (int k = 1; k < width; k++) codePoint = (codePoint << 6) | (bytes[i + k] & 0x3F);
                out.appendCodePoint(codePoint);
            } else if (i + valid == length && !atEnd) {
                return i;
            } else {
                out.append('\uFFFD');
            }
            i += valid;
        }
        return i;
    }

    /** Whether {@code next} is a valid byte at position {@code index} of a sequence that starts with {@code lead}. */
    private static boolean continues(int lead, int index, int next) {
        if (index == 1) {
            return switch (lead) {
                case 0xE0 -> next >= 0xA0 && next <= 0xBF;
                case 0xED -> next >= 0x80 && next <= 0x9F;
                case 0xF0 -> next >= 0x90 && next <= 0xBF;
                case 0xF4 -> next >= 0x80 && next <= 0x8F;
                default -> next >= 0x80 && next <= 0xBF;
            };
        }
        return next >= 0x80 && next <= 0xBF;
    }
}
