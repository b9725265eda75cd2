package fs.backend;

/** The keys and values of every layer, in a layout private to the {@link Backend} that allocated it. */
public interface KvCache {
    int layers();

    int contextLength();

    int kvHeads();

    int headDim();
}
