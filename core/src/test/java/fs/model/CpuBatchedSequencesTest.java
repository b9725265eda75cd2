package fs.model;

import fs.backend.Backend;
import fs.backend.cpu.VectorBackend;

/** Batched sequences on the Vector API backend with two threads. */
class CpuBatchedSequencesTest extends BatchedSequencesTest {
    @Override
    protected Backend createBackend() {
        return new VectorBackend(2);
    }

    /** As CpuModelGoldenTest's: one row and a batch sum each matmul output in different orders. */
    @Override
    protected double batchingTolerance(ModelConfig config, float logit) {
        return CpuSummationBound.batchingTolerance(config, logit);
    }
}
