package fs.backend;

/**
 * The keys and values of every layer for {@link #sequences} independent sequences (slots) of {@link #contextLength}
 * positions each, in a layout private to the {@link Backend} that allocated it.
 */
public interface KvCache {
    int layers();

    int sequences();

    int contextLength();

    int kvHeads();

    int headDim();

    /** What the keys and the values are stored as. */
    KvCacheTypes types();
}
