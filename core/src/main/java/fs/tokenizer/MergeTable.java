package fs.tokenizer;

/**
 * The BPE merges as an open-addressing hash table from a pair of token ids to the merge's rank and the id of the
 * merged token: a primitive table because encoding looks pairs up constantly and loading inserts ~150k of them.
 */
final class MergeTable {
    private static final long EMPTY = -1L;
    private long[] keys;
    private int[] ranks;
    private int[] merged;
    private int mask;
    private int size;

    MergeTable(int expectedMerges) {
        allocate(Integer.highestOneBit(Math.max(4, expectedMerges * 2) - 1) << 1);
    }

    private MergeTable(long[] keys, int[] ranks, int[] merged, int size) {
        this.keys = keys;
        this.ranks = ranks;
        this.merged = merged;
        this.mask = keys.length - 1;
        this.size = size;
    }

    /** The table as it is, for {@link TokenizerCache}: reading it back costs no hashing. */
    void writeTo(java.io.DataOutputStream out) throws java.io.IOException {
        out.writeInt(size);
        BinaryArrays.writeLongs(out, keys, keys.length);
        BinaryArrays.writeInts(out, ranks, ranks.length);
        BinaryArrays.writeInts(out, merged, merged.length);
    }

    static MergeTable readFrom(java.nio.ByteBuffer in) {
        int size = in.getInt();
        long[] keys = BinaryArrays.readLongs(in);
        int[] ranks = BinaryArrays.readInts(in);
        int[] merged = BinaryArrays.readInts(in);
        if (Integer.bitCount(keys.length) != 1 || ranks.length != keys.length || merged.length != keys.length
                || size < 0 || size * 2 > keys.length) {
            throw new IllegalArgumentException("bad merge table");
        }
        int used = 0;
        for (long key : keys) if (key != EMPTY) used++;
        // A table with no empty slot would make every lookup of an absent pair probe forever.
        if (used != size) throw new IllegalArgumentException("merge count does not match the table");
        return new MergeTable(keys, ranks, merged, size);
    }

    /** Whether every merge names tokens the vocabulary has: both of the pair and the merged one. */
    boolean usesOnlyTokensOf(TokenIds vocab) {
        for (int slot = 0; slot < keys.length; slot++) {
            long key = keys[slot];
            if (key == EMPTY) continue;
            if (!vocab.hasToken((int) (key >>> 32)) || !vocab.hasToken((int) key) || !vocab.hasToken(merged[slot])) return false;
        }
        return true;
    }

    /**
     * Whether the first merges in the table are found where their keys say: a check that a table read back was
     * hashed the way this class hashes now (a changed hash would misplace nearly all of them).
     */
    boolean findsMerges(int count) {
        for (int slot = 0; slot < keys.length && count > 0; slot++) {
            long key = keys[slot];
            if (key == EMPTY) continue;
            if (find((int) (key >>> 32), (int) key) != slot) return false;
            count--;
        }
        return true;
    }

    private void allocate(int capacity) {
        keys = new long[capacity];
        java.util.Arrays.fill(keys, EMPTY);
        ranks = new int[capacity];
        merged = new int[capacity];
        mask = capacity - 1;
        size = 0;
    }

    /** Adds a merge; a pair listed twice keeps its later rank, as Hugging Face's map does. */
    void put(int left, int right, int rank, int mergedId) {
        if (size * 2 >= keys.length) grow();
        long key = key(left, right);
        int slot = slot(key);
        while (keys[slot] != EMPTY && keys[slot] != key) slot = (slot + 1) & mask;
        if (keys[slot] == EMPTY) size++;
        keys[slot] = key;
        ranks[slot] = rank;
        merged[slot] = mergedId;
    }

    /** The slot of the pair, or -1 when the pair does not merge. */
    int find(int left, int right) {
        long key = key(left, right);
        int slot = slot(key);
        while (true) {
            long k = keys[slot];
            if (k == key) return slot;
            if (k == EMPTY) return -1;
            slot = (slot + 1) & mask;
        }
    }

    int rank(int slot) {
        return ranks[slot];
    }

    int mergedId(int slot) {
        return merged[slot];
    }

    private void grow() {
        long[] oldKeys = keys;
        int[] oldRanks = ranks;
        int[] oldMerged = merged;
        allocate(keys.length * 2);
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != EMPTY) put((int) (oldKeys[i] >>> 32), (int) oldKeys[i], oldRanks[i], oldMerged[i]);
        }
    }

    private static long key(int left, int right) {
        return ((long) left << 32) | (right & 0xFFFFFFFFL);
    }

    private int slot(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 29)) & mask;
    }
}
