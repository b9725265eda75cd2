package fs.backend;

import fs.FsException;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The argument checks every {@link Backend} makes before it touches memory, worded once so that a caller gets the same
 * line from each backend. A weight the file got wrong is an {@link FsException} (the user's file); a buffer, cache or
 * position the engine got wrong is an {@link IllegalArgumentException} (a bug in the caller).
 */
public final class BackendChecks {
    private BackendChecks() {}

    /**
     * A tensor {@code backend} can hold as a weight: stored in a dtype it {@code reads}, of rank 1 or 2, holding the
     * bytes its shape needs, with rows and columns that fit an int.
     */
    public static void checkUpload(Tensor tensor, String backend, Predicate<DType> reads) {
        if (!reads.test(tensor.dtype())) {
            throw new FsException("tensor " + tensor.name() + " is stored as " + tensor.dtype() + ", which the " + backend
                    + " backend does not read (it reads "
                    + Arrays.stream(DType.values()).filter(reads).toList() + ")");
        }
        if (tensor.rank() != 1 && tensor.rank() != 2) {
            throw new FsException("tensor " + tensor.name() + " has rank " + tensor.rank() + "; weights are rank 1 or 2");
        }
        long needed;
        try {
            needed = tensor.byteSize();
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new FsException("tensor " + tensor.name() + " has a shape " + tensor.dtype()
                    + Arrays.toString(tensor.shape()) + " whose rows are not whole blocks or too large");
        }
        if (tensor.data().byteSize() != needed) {
            throw new FsException("tensor " + tensor.name() + " holds " + tensor.data().byteSize() + " bytes, its shape "
                    + tensor.dtype() + Arrays.toString(tensor.shape()) + " needs " + needed);
        }
        if (tensor.columns() > Integer.MAX_VALUE || tensor.rows() > Integer.MAX_VALUE) {
            throw new FsException("tensor " + tensor.name() + " is too large: " + tensor);
        }
    }

    /** The arguments of {@link Backend#allocateKvCache}: every count positive. */
    public static void checkKvCacheShape(int layers, int sequences, int contextLength, int kvHeads, int headDim) {
        if (layers <= 0 || sequences <= 0 || contextLength <= 0 || kvHeads <= 0 || headDim <= 0) {
            throw new IllegalArgumentException("bad kv cache shape: layers " + layers + ", sequences " + sequences
                    + ", context " + contextLength + ", kv heads " + kvHeads + ", head dim " + headDim);
        }
    }

    /**
     * The types of a cache a backend named {@code backend} is asked for: each among {@code available}, and whole
     * blocks of a head of {@code headDim}; otherwise one line (an FsException) naming what is available.
     */
    public static void checkKvCacheTypes(KvCacheTypes types, int headDim, Set<KvCacheType> available,
                                         String backend) {
        for (KvCacheType type : new KvCacheType[] {types.keys(), types.values()}) {
            if (!available.contains(type)) {
                throw new FsException("the " + backend + " backend has no " + type + " KV cache; it has "
                        + available.stream().map(KvCacheType::label).collect(Collectors.joining(", ")));
            }
        }
        types.checkedFor(headDim);
    }

    /** {@code op}'s layer, and every row's position and sequence, lie inside {@code cache}. */
    public static void checkPositions(KvCache cache, int layer, RowPositions placed, String op) {
        if (layer < 0 || layer >= cache.layers()) {
            throw new IllegalArgumentException(op + ": layer " + layer + " outside 0.." + (cache.layers() - 1));
        }
        if (placed.mostPositions() > cache.contextLength()) {
            throw new IllegalArgumentException(op + ": position " + (placed.mostPositions() - 1)
                    + " outside the kv cache's context of " + cache.contextLength());
        }
        if (placed.mostSequences() > cache.sequences()) {
            throw new IllegalArgumentException(op + ": sequence " + (placed.mostSequences() - 1)
                    + " outside the kv cache's " + cache.sequences() + " sequences");
        }
    }

    /** Attention's query heads split into equal groups, one per kv head of {@code cache}. */
    public static void checkHeads(int heads, KvCache cache) {
        if (heads <= 0 || heads % cache.kvHeads() != 0) {
            throw new IllegalArgumentException("attention: " + heads + " query heads cannot share " + cache.kvHeads()
                    + " kv heads");
        }
    }

    /** A token id that names a row of the embedding {@code table}: an id from outside would read outside it. */
    public static void checkToken(Weight table, int token) {
        if (token < 0 || token >= table.rows()) {
            throw new FsException("token id " + token + " is outside the vocabulary of " + table.name() + " (0.."
                    + (table.rows() - 1) + ")");
        }
    }

    /** {@code buffer} holds at least {@code length} elements for {@code what}. */
    public static void requireLength(Buffer buffer, long length, String what) {
        if (length < 0 || buffer.length() < length) {
            throw new IllegalArgumentException(what + " needs " + length + " elements, the buffer has " + buffer.length());
        }
    }

    /** The floats that host memory {@code host} holds, for a transfer; memory that is not whole floats is refused. */
    public static long floatsIn(MemorySegment host, String what) {
        if (host.byteSize() % Float.BYTES != 0) {
            throw new IllegalArgumentException(what + " is " + host.byteSize() + " bytes, not whole floats");
        }
        return host.byteSize() / Float.BYTES;
    }

    /** Elements {@code offset .. offset + length} lie inside {@code buffer}. */
    public static void requireRange(Buffer buffer, long offset, long length, String what) {
        if (offset < 0 || length < 0 || offset + length > buffer.length()) {
            throw new IllegalArgumentException(what + ": elements " + offset + ".." + (offset + length)
                    + " outside a buffer of " + buffer.length());
        }
    }
}
