package fs.backend;

import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A backend that passes every op to another one: a subclass overrides the op it watches or changes (fs verify
 * --native's check of each matmul; in tests, a fault, a bug, a rounding) and leaves the rest to the backend under it.
 */
public abstract class ForwardingBackend implements Backend {
    protected final Backend delegate;

    protected ForwardingBackend(Backend delegate) {
        this.delegate = delegate;
    }

    @Override public String description() { return delegate.description(); }
    @Override public boolean supports(DType dtype) { return delegate.supports(dtype); }
    @Override public Weight upload(Tensor tensor) { return delegate.upload(tensor); }
    @Override public void awaitUploads() { delegate.awaitUploads(); }
    @Override public Buffer allocate(long length) { return delegate.allocate(length); }
    @Override public KvCache allocateKvCache(int layers, int sequences, int contextLength, int kvHeads, int headDim,
                                             KvCacheTypes types) {
        return delegate.allocateKvCache(layers, sequences, contextLength, kvHeads, headDim, types);
    }
    @Override public Set<KvCacheType> kvCacheTypes() { return delegate.kvCacheTypes(); }
    @Override public void embed(Weight table, int[] tokens, Buffer out) { delegate.embed(table, tokens, out); }
    @Override public void rmsNorm(Buffer x, Weight gamma, Buffer out, int rows, float eps) {
        delegate.rmsNorm(x, gamma, out, rows, eps);
    }
    @Override public void matmul(Buffer x, Weight w, Buffer out, int rows) { delegate.matmul(x, w, out, rows); }
    @Override public void rope(Buffer x, RowPositions rows, int heads, Rope rope) { delegate.rope(x, rows, heads, rope); }
    @Override public void storeKv(KvCache cache, int layer, Buffer k, Buffer v, RowPositions rows) {
        delegate.storeKv(cache, layer, k, v, rows);
    }
    @Override public void attention(Buffer q, KvCache cache, int layer, Buffer out, RowPositions rows, int heads) {
        delegate.attention(q, cache, layer, out, rows, heads);
    }
    @Override public void siluMul(Buffer gate, Buffer up, Buffer out, long length) {
        delegate.siluMul(gate, up, out, length);
    }
    @Override public void add(Buffer x, Buffer y, long length) { delegate.add(x, y, length); }
    @Override public void matmulExperts(Buffer x, boolean xPerSlot, List<Weight> experts, ExpertRouting routing,
            Buffer out) {
        delegate.matmulExperts(x, xPerSlot, experts, routing, out);
    }
    @Override public void sumExperts(Buffer slots, ExpertRouting routing, Buffer out, int width) {
        delegate.sumExperts(slots, routing, out, width);
    }
    @Override public void copy(Buffer src, long srcOffset, Buffer dst, long dstOffset, long length) {
        delegate.copy(src, srcOffset, dst, dstOffset, length);
    }
    @Override public void read(Buffer src, long offset, MemorySegment dst) { delegate.read(src, offset, dst); }
    @Override public void write(MemorySegment src, Buffer dst, long offset) { delegate.write(src, dst, offset); }
    @Override public Optional<MemorySegment> pinnedStaging(long bytes) { return delegate.pinnedStaging(bytes); }
    @Override public int argmax(Buffer x, long offset, int length) { return delegate.argmax(x, offset, length); }
    @Override public void close() { delegate.close(); }
}
