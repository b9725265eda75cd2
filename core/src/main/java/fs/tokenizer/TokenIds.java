package fs.tokenizer;

import java.util.Arrays;

/**
 * The vocabulary both ways: an open-addressing table from token to id, built for loading speed, and each id's entry. The merges (150k of them, each
 * naming three tokens: a, b and a+b) are looked up straight from the JSON parser's character buffers, without making a
 * string for any of them. Lookups are bound by memory latency, so a slot holds the token's hash and the place of its
 * entry in one character arena ([id, length, characters]): a hit costs two cache misses, not the four of a table of
 * String keys and boxed ids.
 */
final class TokenIds {
    private static final int HEADER = 4; // id and length, two chars each

    /** 0 for empty, else hash << 32 | (arena offset + 1). */
    private long[] slots;
    private int shift;
    private int size;
    private char[] arena = new char[1 << 16];
    private int arenaLength;
    /** Each id's arena offset, -1 where no token has the id; an id's token is made into a string only when asked for. */
    private int[] offsetById = new int[0];
    private int idLimit;

    TokenIds(int expected) {
        allocate(Integer.highestOneBit(Math.max(4, expected * 2) - 1) << 1);
    }

    private TokenIds(long[] slots, int size, char[] arena, int[] offsetById) {
        this.slots = slots;
        this.shift = 32 - Integer.numberOfTrailingZeros(slots.length);
        this.size = size;
        this.arena = arena;
        this.arenaLength = arena.length;
        this.offsetById = offsetById;
        this.idLimit = offsetById.length;
    }

    private void allocate(int capacity) {
        slots = new long[capacity];
        shift = 32 - Integer.numberOfTrailingZeros(capacity);
        size = 0;
    }

    /** Sets the id of a token; a token listed twice keeps its later id. */
    void put(String token, int id) {
        if (size * 2 >= slots.length) grow();
        int hash = token.hashCode();
        int mask = slots.length - 1;
        for (int slot = spread(hash); ; slot = (slot + 1) & mask) {
            long entry = slots[slot];
            if (entry == 0) {
                int offset = append(token, id);
                slots[slot] = ((long) hash << 32) | (offset + 1L);
                size++;
                setOffset(id, offset);
                return;
            }
            int offset = (int) entry - 1;
            if ((int) (entry >>> 32) == hash && equals(offset, token)) {
                arena[offset] = (char) (id >>> 16);
                arena[offset + 1] = (char) id;
                setOffset(id, offset);
                return;
            }
        }
    }

    private void setOffset(int id, int offset) {
        if (id >= offsetById.length) {
            int old = offsetById.length;
            offsetById = Arrays.copyOf(offsetById, Math.max(id + 1, old * 2));
            Arrays.fill(offsetById, old, offsetById.length, -1);
        }
        offsetById[id] = offset;
        idLimit = Math.max(idLimit, id + 1);
    }

    /** How many distinct tokens there are. */
    int size() {
        return size;
    }

    /** One more than the highest id. */
    int idLimit() {
        return idLimit;
    }

    /** The token with this id (a token listed under two ids has both), or null. */
    String token(int id) {
        if (id < 0 || id >= idLimit || offsetById[id] < 0) return null;
        int offset = offsetById[id];
        return new String(arena, offset + HEADER, lengthAt(offset));
    }

    private int append(String token, int id) {
        int length = token.length();
        if (arenaLength + HEADER + length > arena.length) arena = Arrays.copyOf(arena, Math.max(arena.length * 2, arenaLength + HEADER + length));
        int offset = arenaLength;
        arena[offset] = (char) (id >>> 16);
        arena[offset + 1] = (char) id;
        arena[offset + 2] = (char) (length >>> 16);
        arena[offset + 3] = (char) length;
        token.getChars(0, length, arena, offset + HEADER);
        arenaLength += HEADER + length;
        return offset;
    }

    /** The id of a token, or -1. */
    int id(String token) {
        int hash = token.hashCode();
        int mask = slots.length - 1;
        for (int slot = spread(hash); ; slot = (slot + 1) & mask) {
            long entry = slots[slot];
            if (entry == 0) return -1;
            int offset = (int) entry - 1;
            if ((int) (entry >>> 32) == hash && equals(offset, token)) return idAt(offset);
        }
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
     * whose String.hashCode is {@code hash}, or -1.
     */
    int id(int hash, char[] a, int aFrom, int aLength, char[] b, int bFrom, int bLength) {
        int mask = slots.length - 1;
        for (int slot = spread(hash); ; slot = (slot + 1) & mask) {
            long entry = slots[slot];
            if (entry == 0) return -1;
            if ((int) (entry >>> 32) != hash) continue;
            int offset = (int) entry - 1;
            if (lengthAt(offset) == aLength + bLength
                    && Arrays.equals(arena, offset + HEADER, offset + HEADER + aLength, a, aFrom, aFrom + aLength)
                    && Arrays.equals(arena, offset + HEADER + aLength, offset + HEADER + aLength + bLength, b, bFrom, bFrom + bLength)) {
                return idAt(offset);
            }
        }
    }

    private boolean equals(int offset, String token) {
        if (lengthAt(offset) != token.length()) return false;
        for (int i = 0; i < token.length(); i++) if (arena[offset + HEADER + i] != token.charAt(i)) return false;
        return true;
    }

    private int idAt(int offset) {
        return arena[offset] << 16 | arena[offset + 1];
    }

    private int lengthAt(int offset) {
        return arena[offset + 2] << 16 | arena[offset + 3];
    }

    private void grow() {
        long[] old = slots;
        allocate(old.length * 2);
        int mask = slots.length - 1;
        for (long entry : old) {
            if (entry == 0) continue;
            int slot = spread((int) (entry >>> 32));
            while (slots[slot] != 0) slot = (slot + 1) & mask;
            slots[slot] = entry;
            size++;
        }
    }

    /** The tables as they are, for {@link TokenizerCache}: reading them back costs no hashing. */
    void writeTo(java.io.DataOutputStream out) throws java.io.IOException {
        out.writeInt(size);
        BinaryArrays.writeLongs(out, slots, slots.length);
        BinaryArrays.writeChars(out, arena, arenaLength);
        BinaryArrays.writeInts(out, offsetById, idLimit);
    }

    static TokenIds readFrom(java.nio.ByteBuffer in) {
        int size = in.getInt();
        long[] slots = BinaryArrays.readLongs(in);
        if (Integer.bitCount(slots.length) != 1 || size < 0 || size * 2 > slots.length) throw new IllegalArgumentException("bad vocabulary table");
        char[] arena = BinaryArrays.readChars(in);
        int[] offsetById = BinaryArrays.readInts(in);
        TokenIds ids = new TokenIds(slots, size, arena, offsetById);
        ids.check();
        return ids;
    }

    /**
     * That tables read back can be used without a lookup running off the arena, returning an id without a token, or
     * (with no empty slot left) probing forever: checks the checksum cannot make, against a file another build or a
     * hostile program wrote.
     */
    private void check() {
        int used = 0;
        for (long entry : slots) {
            if (entry == 0) continue;
            used++;
            int offset = (int) entry - 1;
            if (!isEntry(offset)) throw new IllegalArgumentException("bad vocabulary slot");
            int id = idAt(offset);
            if (id < 0 || id >= idLimit || offsetById[id] < 0) throw new IllegalArgumentException("bad token id");
        }
        if (used != size) throw new IllegalArgumentException("vocabulary size does not match its slots");
        for (int offset : offsetById) if (offset != -1 && !isEntry(offset)) throw new IllegalArgumentException("bad token offset");
    }

    /** Whether an arena offset starts an entry that lies wholly within the arena. */
    private boolean isEntry(int offset) {
        return offset >= 0 && offset <= arena.length - HEADER && lengthAt(offset) >= 0
                && lengthAt(offset) <= arena.length - HEADER - offset;
    }

    /** Whether the id names a token, for a table that refers to ids. */
    boolean hasToken(int id) {
        return id >= 0 && id < idLimit && offsetById[id] >= 0;
    }

    /** A slot from the hash's high bits after a multiplicative mix (String hashes of short tokens are clustered). */
    private int spread(int hash) {
        return (hash * 0x9E3779B9) >>> shift;
    }
}
