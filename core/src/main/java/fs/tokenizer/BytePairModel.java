package fs.tokenizer;

/**
 * Byte-level BPE over one pre-token: starts from one token per byte and applies merges lowest rank first (leftmost
 * first among equal ranks), with a heap of candidate pairs over a linked list of symbols, as Hugging Face's BPE does, so
 * a long word costs O(n log n) rather than O(n^2).
 */
final class BytePairModel {
    /**
     * Pre-tokens repeat a lot in text, so their ids are cached: up to this many (Hugging Face keeps 10k), never evicted,
     * so that a working set that fits is never thrashed.
     */
    private static final int CACHE_ENTRIES = 1 << 14;
    private static final int CACHEABLE_LENGTH = 64;

    private final int[] byteIds;
    private final MergeTable merges;
    private final TokenIds wholeWords;
    /**
     * Open addressing, filled to half at most. Entries are immutable and never removed, so threads sharing the
     * tokenizer see a slot either empty or complete: an entry's fields are final, and the Java memory model (JLS 17.5)
     * shows a thread that sees the entry those fields and the ids array they reach as the constructor left them, even
     * through this racy array. Two threads filling one slot at once only lose a cache entry.
     */
    private final CacheEntry[] cache = new CacheEntry[CACHE_ENTRIES * 2];
    private final java.util.concurrent.atomic.AtomicInteger cached = new java.util.concurrent.atomic.AtomicInteger();

    private record CacheEntry(int hash, String piece, int[] ids) {}

    /**
     * @param byteIds the id of each byte's one-character token, -1 where the vocabulary lacks it (that byte is then
     *     dropped, as Hugging Face does without an unknown token)
     * @param wholeWords when not null (ignore_merges), a pre-token that is itself in the vocabulary is taken whole
     */
    BytePairModel(int[] byteIds, MergeTable merges, TokenIds wholeWords) {
        this.byteIds = byteIds;
        this.merges = merges;
        this.wholeWords = wholeWords;
    }

    /** The token ids of the pre-token {@code text[start, end)}. */
    int[] encode(String text, int start, int end) {
        int length = end - start;
        if (length > CACHEABLE_LENGTH) return encodeUncached(text, start, end);
        int hash = 0;
        for (int i = start; i < end; i++) hash = 31 * hash + text.charAt(i);
        int mask = cache.length - 1;
        int slot = (hash * 0x9E3779B9) >>> (32 - Integer.numberOfTrailingZeros(cache.length));
        for (CacheEntry entry; (entry = cache[slot]) != null; slot = (slot + 1) & mask) {
            if (entry.hash == hash && entry.piece.length() == length && text.regionMatches(start, entry.piece, 0, length)) {
                return entry.ids;
            }
        }
        int[] ids = encodeUncached(text, start, end);
        if (cached.get() < CACHE_ENTRIES) {
            cached.incrementAndGet();
            cache[slot] = new CacheEntry(hash, text.substring(start, end), ids);
        }
        return ids;
    }

    private int[] encodeUncached(String text, int start, int end) {
        byte[] bytes = utf8(text, start, end);
        if (wholeWords != null) {
            int whole = wholeWords.id(ByteLevel.spell(bytes, 0, bytes.length));
            if (whole >= 0) return new int[] {whole};
        }
        return merge(bytes);
    }

    /** UTF-8 of a range of a string, as String.getBytes would give it ('?' for a lone surrogate). */
    private static byte[] utf8(String text, int start, int end) {
        boolean ascii = true;
        for (int i = start; i < end && ascii; i++) ascii = text.charAt(i) < 0x80;
        if (ascii) {
            byte[] bytes = new byte[end - start];
            for (int i = start; i < end; i++) bytes[i - start] = (byte) text.charAt(i);
            return bytes;
        }
        return text.substring(start, end).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private int[] merge(byte[] bytes) {
        int n = 0;
        int[] symbol = new int[bytes.length];
        for (byte b : bytes) {
            int id = byteIds[b & 0xFF];
            if (id >= 0) symbol[n++] = id;
        }
        if (n < 2) return java.util.Arrays.copyOf(symbol, n);

        int[] next = new int[n];
        int[] prev = new int[n];
        boolean[] removed = new boolean[n];
        for (int i = 0; i < n; i++) {
            next[i] = i + 1 < n ? i + 1 : -1;
            prev[i] = i - 1;
        }
        PairHeap heap = new PairHeap(n);
        for (int i = 0; i + 1 < n; i++) {
            int slot = merges.find(symbol[i], symbol[i + 1]);
            if (slot >= 0) heap.push(merges.rank(slot), i);
        }
        int live = n;
        while (!heap.isEmpty()) {
            long top = heap.pop();
            int rank = (int) (top >>> 32);
            int pos = (int) top;
            if (removed[pos]) continue;
            int right = next[pos];
            if (right < 0) continue;
            int slot = merges.find(symbol[pos], symbol[right]);
            // The pair at pos changed since this candidate was pushed.
            if (slot < 0 || merges.rank(slot) != rank) continue;

            symbol[pos] = merges.mergedId(slot);
            removed[right] = true;
            live--;
            int after = next[right];
            next[pos] = after;
            if (after >= 0) prev[after] = pos;

            int before = prev[pos];
            if (before >= 0) {
                int s = merges.find(symbol[before], symbol[pos]);
                if (s >= 0) heap.push(merges.rank(s), before);
            }
            if (after >= 0) {
                int s = merges.find(symbol[pos], symbol[after]);
                if (s >= 0) heap.push(merges.rank(s), pos);
            }
        }
        int[] ids = new int[live];
        int k = 0;
        for (int i = 0; i >= 0; i = next[i]) ids[k++] = symbol[i];
        return ids;
    }

    /** A binary min-heap of (rank, position) packed in longs, so equal ranks pop leftmost first. */
    private static final class PairHeap {
        private long[] items;
        private int size;

        PairHeap(int capacity) {
            items = new long[Math.max(4, capacity)];
        }

        boolean isEmpty() {
            return size == 0;
        }

        void push(int rank, int pos) {
            if (size == items.length) items = java.util.Arrays.copyOf(items, size * 2);
            long item = ((long) rank << 32) | pos;
            int i = size++;
            while (i > 0) {
                int parent = (i - 1) >>> 1;
                if (items[parent] <= item) break;
                items[i] = items[parent];
                i = parent;
            }
            items[i] = item;
        }

        long pop() {
            long top = items[0];
            long last = items[--size];
            int i = 0;
            while (true) {
                int child = 2 * i + 1;
                if (child >= size) break;
                if (child + 1 < size && items[child + 1] < items[child]) child++;
                if (items[child] >= last) break;
                items[i] = items[child];
                i = child;
            }
            items[i] = last;
            return top;
        }
    }
}
