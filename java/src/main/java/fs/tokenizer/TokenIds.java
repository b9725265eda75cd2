package fs.tokenizer;

/**
 * The vocabulary as an open-addressing table from token to id. The merges (150k of them, each naming three tokens: a,
 * b and a+b) are looked up straight from the JSON parser's character buffers, without making a string for any of
 * them; that is most of the time of loading tokenizer.json.
 */
final class TokenIds {
    private String[] keys;
    private int[] ids;
    private int mask;
    private int shift;
    private int size;

    TokenIds(int expected) {
        allocate(Integer.highestOneBit(Math.max(4, expected * 2) - 1) << 1);
    }

    private void allocate(int capacity) {
        keys = new String[capacity];
        ids = new int[capacity];
        mask = capacity - 1;
        shift = 32 - Integer.numberOfTrailingZeros(capacity);
        size = 0;
    }

    /** Sets the id of a token; a token listed twice keeps its later id. */
    void put(String token, int id) {
        if (size * 2 >= keys.length) grow();
        int slot = spread(token.hashCode());
        while (keys[slot] != null && !keys[slot].equals(token)) slot = (slot + 1) & mask;
        if (keys[slot] == null) size++;
        keys[slot] = token;
        ids[slot] = id;
    }

    /** The id of a token, or -1. */
    int id(String token) {
        int slot = spread(token.hashCode());
        for (String key; (key = keys[slot]) != null; slot = (slot + 1) & mask) {
            if (key.equals(token)) return ids[slot];
        }
        return -1;
    }

    /** String.hashCode of the token spelled by {@code chars[from, from + length)}. */
    static int hash(char[] chars, int from, int length) {
        int hash = 0;
        for (int i = from; i < from + length; i++) hash = 31 * hash + chars[i];
        return hash;
    }

    /** String.hashCode of a concatenation, from the hashes of its parts. */
    static int hashOfConcat(int leftHash, int rightHash, int rightLength) {
        int hash = leftHash;
        for (int i = 0; i < rightLength; i++) hash *= 31;
        return hash + rightHash;
    }

    /**
     * The id of the token spelled by {@code a[aFrom, aFrom + aLength)} followed by {@code b[bFrom, bFrom + bLength)},
     * whose String.hashCode is {@code hash}, or -1: merges are looked up straight from the parser's buffers.
     */
    int id(int hash, char[] a, int aFrom, int aLength, char[] b, int bFrom, int bLength) {
        int slot = spread(hash);
        for (String key; (key = keys[slot]) != null; slot = (slot + 1) & mask) {
            if (key.length() == aLength + bLength && matches(key, a, aFrom, aLength, b, bFrom, bLength)) return ids[slot];
        }
        return -1;
    }

    private static boolean matches(String key, char[] a, int aFrom, int aLength, char[] b, int bFrom, int bLength) {
        for (int i = 0; i < aLength; i++) if (key.charAt(i) != a[aFrom + i]) return false;
        for (int i = 0; i < bLength; i++) if (key.charAt(aLength + i) != b[bFrom + i]) return false;
        return true;
    }

    /** Calls {@code action} for every token and its id. */
    void forEach(java.util.function.ObjIntConsumer<String> action) {
        for (int i = 0; i < keys.length; i++) if (keys[i] != null) action.accept(keys[i], ids[i]);
    }

    private void grow() {
        String[] oldKeys = keys;
        int[] oldIds = ids;
        allocate(keys.length * 2);
        for (int i = 0; i < oldKeys.length; i++) if (oldKeys[i] != null) put(oldKeys[i], oldIds[i]);
    }

    /** A slot from the hash's high bits after a multiplicative mix (String hashes of short tokens are clustered). */
    private int spread(int hash) {
        return (hash * 0x9E3779B9) >>> shift;
    }
}
