package fs.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.ForwardingBackend;
import fs.backend.cpu.VectorBackend;
import fs.model.TestModel;
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
    private static final class DoublingSiluMul extends ForwardingBackend {
        DoublingSiluMul(Backend delegate) {
            super(delegate);
        }

        @Override public void siluMul(Buffer gate, Buffer up, Buffer out, long length) {
            delegate.siluMul(gate, up, out, length);
            delegate.add(out, out, length);
        }

        @Override public String description() { return "doubling silu_mul"; }
    }
}
