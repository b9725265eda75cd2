package fs.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.KvCache;
import fs.backend.Rope;
import fs.backend.RowPositions;
import fs.backend.Weight;
import fs.backend.cpu.VectorBackend;
import fs.model.TestModel;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class CrossCheckTest {
    private static final Path MODEL = Path.of(System.getProperty("fs.repo"), "models", "tiny-untied");
    private static final int[] TOKENS = {9707, 11, 1879, 0, 151644, 872, 198, 3838};

    @Test
    void identicalBackendsAgreeExactly() {
        try (TestModel tested = open(new VectorBackend(1)); TestModel oracle = open(new VectorBackend(2))) {
            CrossCheck.Report report = CrossCheck.run(tested.sequence(), oracle.sequence(), TOKENS, 1e-6);
            assertTrue(report.agree());
            assertNull(report.firstOverThreshold());
            assertEquals(TOKENS.length + 1, report.top1Agreements());
            // 2 passes × (embed + 17 ops per layer × 2 layers + final_norm + logits); storeKv has no output of its own
            assertEquals(2 * (1 + 17 * 2 + 2), report.differences().size());
            assertEquals(0.0, report.worst().nmse()); // thread count never changes the CPU backend's results
        }
    }

    @Test
    void aPlantedErrorIsNamedWhereItFirstAppears() {
        try (TestModel tested = open(new DoublingSiluMul(new VectorBackend(2)));
             TestModel oracle = open(new VectorBackend(2))) {
            CrossCheck.Report report = CrossCheck.run(tested.sequence(), oracle.sequence(), TOKENS, 1e-6);
            assertFalse(report.agree());
            OpDifference first = report.firstOverThreshold();
            assertNotNull(first);
            assertEquals("prefill layer 0 silu_mul", first.where());
            assertEquals(1.0, first.nmse(), 1e-9); // (2x − x)² / x² summed: exactly 1
            for (OpDifference d : report.differences()) {
                if (d.pass().equals("prefill") && d.layer() == 0 && d.op().equals("up_proj")) assertEquals(0.0, d.nmse());
            }
        }
    }

    private static TestModel open(Backend backend) {
        return TestModel.open(MODEL, backend, TOKENS.length, TOKENS.length, TOKENS.length);
    }

    /** A backend with one bug: silu(gate)·up comes out doubled. */
    private record DoublingSiluMul(Backend delegate) implements Backend {
        @Override public void siluMul(Buffer gate, Buffer up, Buffer out, long length) {
            delegate.siluMul(gate, up, out, length);
            delegate.add(out, out, length);
        }

        @Override public String description() { return "doubling silu_mul"; }
        @Override public boolean supports(DType dtype) { return delegate.supports(dtype); }
        @Override public Weight upload(Tensor tensor) { return delegate.upload(tensor); }
        @Override public Buffer allocate(long length) { return delegate.allocate(length); }
        @Override public KvCache allocateKvCache(int layers, int sequences, int contextLength, int kvHeads, int headDim) {
            return delegate.allocateKvCache(layers, sequences, contextLength, kvHeads, headDim);
        }
        @Override public void embed(Weight table, int[] tokens, Buffer out) { delegate.embed(table, tokens, out); }
        @Override public void rmsNorm(Buffer x, Weight gamma, Buffer out, int rows, float eps) {
            delegate.rmsNorm(x, gamma, out, rows, eps);
        }
        @Override public void matmul(Buffer x, Weight w, Buffer out, int rows) { delegate.matmul(x, w, out, rows); }
        @Override public void rope(Buffer x, RowPositions rows, int heads, Rope rope) {
            delegate.rope(x, rows, heads, rope);
        }
        @Override public void storeKv(KvCache cache, int layer, Buffer k, Buffer v, RowPositions rows) {
            delegate.storeKv(cache, layer, k, v, rows);
        }
        @Override public void attention(Buffer q, KvCache cache, int layer, Buffer out, RowPositions rows, int heads) {
            delegate.attention(q, cache, layer, out, rows, heads);
        }
        @Override public void add(Buffer x, Buffer y, long length) { delegate.add(x, y, length); }
        @Override public void copy(Buffer src, long srcOffset, Buffer dst, long dstOffset, long length) {
            delegate.copy(src, srcOffset, dst, dstOffset, length);
        }
        @Override public void read(Buffer src, long offset, float[] dst) { delegate.read(src, offset, dst); }
        @Override public int argmax(Buffer x, long offset, int length) { return delegate.argmax(x, offset, length); }
        @Override public void close() { delegate.close(); }
    }
}
