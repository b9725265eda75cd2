package fs.backend;

import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The small set of ops the models' forward passes need. The model calls only this interface; the Vector API backend
 * (the CPU path and the oracle) and the OpenCL backend implement it.
 *
 * <p>Activations are float32 {@link Buffer}s owned by the backend (device memory for OpenCL), laid out row-major with
 * one row per token of the batch. Weights are uploaded once and stay in their stored dtype; kernels decode them to
 * float32 as they read. Every op may be asynchronous: only {@link #read} and {@link #argmax} wait for results.
 * Buffers, weights and caches live until the backend is closed.
 */
public interface Backend extends AutoCloseable {

    /** What the user sees in logs and bench output, e.g. {@code "cpu (Vector API, 2 threads)"}. */
    String description();

    /** Whether {@link #upload} takes weights stored in {@code dtype}. */
    boolean supports(DType dtype);

    /**
     * Makes a checkpoint tensor (rank 1 or 2, a {@link #supports supported} dtype) usable by the ops; no float32
     * copy is made. A dtype the backend does not support is refused by name (an FsException).
     */
    Weight upload(Tensor tensor);

    /**
     * Returns when the work that the uploads so far left running in the background is done, so that what follows
     * runs as it will from then on (a benchmark's timings). The CPU backend repacks weights on a thread of its own,
     * its matmuls reading the file's rows until a weight's copy is ready (the same floats either way); a backend with
     * no such work returns at once.
     */
    default void awaitUploads() {}

    /** A zero-filled float32 buffer of {@code length} elements. */
    Buffer allocate(long length);

    /**
     * A KV cache of {@code sequences} sequence slots, each {@code contextLength} positions × {@code kvHeads} ×
     * {@code headDim} for each of {@code layers} layers, its keys and values stored in {@code types}. Sequences
     * never see each other's positions. A type outside {@link #kvCacheTypes()}, or q8_0 with a head that is not
     * whole blocks, is an FsException naming what is available.
     */
    KvCache allocateKvCache(int layers, int sequences, int contextLength, int kvHeads, int headDim,
                            KvCacheTypes types);

    /** {@link #allocateKvCache(int, int, int, int, int, KvCacheTypes)} of float32 keys and values. */
    default KvCache allocateKvCache(int layers, int sequences, int contextLength, int kvHeads, int headDim) {
        return allocateKvCache(layers, sequences, contextLength, kvHeads, headDim, KvCacheTypes.F32);
    }

    /** The types this backend stores keys and values in (and attends over); a cache of another is refused. */
    Set<KvCacheType> kvCacheTypes();

    /** {@code out[r, :] = table[tokens[r], :]} for each of the {@code tokens.length} rows. */
    void embed(Weight table, int[] tokens, Buffer out);

    /**
     * RMSNorm of each of {@code rows} rows of width {@code gamma.columns()} (for q/k norms a row is one head):
     * {@code out = x / sqrt(mean(x²) + eps) * gamma}. {@code out} may be {@code x}.
     */
    void rmsNorm(Buffer x, Weight gamma, Buffer out, int rows, float eps);

    /** {@code out[r, n] = Σ_k x[r, k] · w[n, k]} for a weight of shape [N, K] and {@code rows} input rows. */
    void matmul(Buffer x, Weight w, Buffer out, int rows);

    /**
     * Rotary embedding in place (Hugging Face's rotate-half: dims i and i + headDim/2 form a pair) on {@code rows.rows()}
     * rows of {@code heads × rope.headDim()}; row r turns by the angles of its position {@code rows.position(r)}. See
     * {@link Rope} for the angles and the attention factor.
     */
    void rope(Buffer x, RowPositions rows, int heads, Rope rope);

    /**
     * Writes the k and v of each of {@code rows.rows()} rows (each {@code kvHeads × headDim}) into the cache of a layer,
     * at the row's position of the row's sequence.
     */
    void storeKv(KvCache cache, int layer, Buffer k, Buffer v, RowPositions rows);

    /**
     * Causal grouped-query attention for {@code rows.rows()} query rows of {@code heads × headDim}; row r sees the cache
     * positions 0..rows.position(r) of its own sequence rows.sequence(r) in the layer. Scale 1/√headDim, float32
     * softmax. {@code out} has the shape of q.
     */
    void attention(Buffer q, KvCache cache, int layer, Buffer out, RowPositions rows, int heads);

    /**
     * ggml's mul_mat_id, for mixtures of experts: for each slot s of {@code routing} (a row and one of its chosen
     * experts), {@code out[s, n] = Σ_k x[in(s), k] · experts[expert(s)][n, k]}, where in(s) is the slot's row, or the
     * slot itself when {@code xPerSlot} (x then has a row per slot, as the down projection's input has). Every expert
     * weight has the same shape; the slots are computed grouped by expert, so that each chosen expert's matrix is read
     * once for the batch.
     */
    void matmulExperts(Buffer x, boolean xPerSlot, List<Weight> experts, ExpertRouting routing, Buffer out);

    /**
     * {@code out[r, :] = Σ_j weight(s) · slots[s, :]} over row r's slots s = r·used + j, summed in slot order (ascending
     * expert), starting from zero; rows of {@code width}.
     */
    void sumExperts(Buffer slots, ExpertRouting routing, Buffer out, int width);

    /** {@code out[i] = silu(gate[i]) · up[i]} for the first {@code length} elements; out may alias gate. */
    void siluMul(Buffer gate, Buffer up, Buffer out, long length);

    /** {@code x[i] += y[i]} for the first {@code length} elements. */
    void add(Buffer x, Buffer y, long length);

    /** Copies {@code length} elements from src at srcOffset to dst at dstOffset. */
    void copy(Buffer src, long srcOffset, Buffer dst, long dstOffset, long length);

    /**
     * Waits for pending work and copies {@code dst.byteSize() / 4} elements starting at {@code offset} into host memory
     * {@code dst} (off-heap, or an array's).
     */
    void read(Buffer src, long offset, MemorySegment dst);

    /**
     * Copies the floats of host memory {@code src} into {@code dst} starting at {@code offset}, after the ops enqueued
     * before it. A model split across backends hands its hidden state from one to the next by a read into host memory
     * and a write from it, through a device's {@link #pinnedStaging} where one side has it.
     */
    void write(MemorySegment src, Buffer dst, long offset);

    /**
     * Page-locked host memory of at least {@code bytes} that {@link #read(Buffer, long, MemorySegment)} and
     * {@link #write(MemorySegment, Buffer, long)} copy to and from at the device's full speed; empty for a backend
     * whose buffers are host memory already (the CPU). It is valid until this backend's next transfer, which may
     * overwrite or free it.
     */
    Optional<MemorySegment> pinnedStaging(long bytes);

    /** Waits for pending work and copies {@code dst.length} elements starting at {@code offset} to the host. */
    default void read(Buffer src, long offset, float[] dst) {
        read(src, offset, MemorySegment.ofArray(dst));
    }

    /** Copies {@code src} from the host into {@code dst} starting at {@code offset}, after the ops enqueued before it. */
    default void write(float[] src, Buffer dst, long offset) {
        write(MemorySegment.ofArray(src), dst, offset);
    }

    /** Index of the largest of {@code length} elements starting at offset (the first one on ties). */
    int argmax(Buffer x, long offset, int length);

    /** Frees every buffer, weight and cache; the backend cannot be used afterwards. */
    @Override
    void close();
}
