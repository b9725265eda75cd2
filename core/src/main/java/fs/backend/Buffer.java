package fs.backend;

/** A float32 activation buffer owned by a {@link Backend}; only that backend can read or write it. */
public interface Buffer {
    /** Number of float32 elements. */
    long length();
}
