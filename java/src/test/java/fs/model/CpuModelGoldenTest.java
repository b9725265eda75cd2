package fs.model;

import fs.backend.Backend;
import fs.backend.cpu.VectorBackend;

/** The golden checks on the Vector API backend with two threads. */
class CpuModelGoldenTest extends ModelGoldenTest {
    @Override
    protected Backend createBackend() {
        return new VectorBackend(2);
    }

    /**
     * One row sums each matmul output in 16 lanes and a tree, a batch in one sequential chain: two roundings of the
     * same sums, a few ulps apart, which the tiny models' logits (up to ~110, an ulp of 8e-6) carry as up to ~2e-4.
     */
    @Override
    protected double batchingTolerance(float logit) {
        return 1e-4 + 5e-6 * Math.abs(logit);
    }
}
