package fs.model;

import fs.backend.Backend;
import fs.backend.cpu.VectorBackend;

/** The golden checks on the Vector API backend with two threads. */
class CpuModelGoldenTest extends ModelGoldenTest {
    @Override
    protected Backend createBackend() {
        return new VectorBackend(2);
    }

    /** One row and a batch sum each matmul output in different orders: {@link CpuSummationBound}. */
    @Override
    protected double batchingTolerance(ModelConfig config, float logit) {
        return CpuSummationBound.batchingTolerance(config, logit);
    }
}
