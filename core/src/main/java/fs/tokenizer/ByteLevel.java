package fs.tokenizer;

/**
 * GPT-2's reversible map between bytes and printable characters: byte-level BPE vocabularies spell every byte as one
 * of these 256 characters, so that tokens are valid strings without whitespace or control characters.
 */
final class ByteLevel {
    private static final char[] BYTE_TO_CHAR = new char[256];
    /** Indexed by character; -1 where a character is not in the alphabet. */
    private static final short[] CHAR_TO_BYTE = new short[512];

    static {
        java.util.Arrays.fill(CHAR_TO_BYTE, (short) -1);
        int next = 256;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) next++;
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = (short) b;
        }
    }

    private ByteLevel() {}

    static char charOf(int unsignedByte) {
        return BYTE_TO_CHAR[unsignedByte];
    }

    /** The byte a character stands for, or -1 if it is not one of the 256 byte characters. */
    static int byteOf(char c) {
        return c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
    }

    /** Spells bytes in the byte alphabet, as vocabulary entries are written. */
    static String spell(byte[] bytes, int from, int to) {
        char[] chars = new char[to - from];
        for (int i = from; i < to; i++) chars[i - from] = BYTE_TO_CHAR[bytes[i] & 0xFF];
        return new String(chars);
    }

    /**
     * The bytes of a token as Hugging Face's ByteLevel decoder gives them: the byte alphabet read back when every
     * character belongs to it, otherwise (added tokens such as "a b") the token's own UTF-8 bytes.
     */
    static byte[] bytesOf(String token) {
        byte[] bytes = new byte[token.length()];
        for (int i = 0; i < token.length(); i++) {
            int b = byteOf(token.charAt(i));
            if (b < 0) return token.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            bytes[i] = (byte) b;
        }
        return bytes;
    }
}
