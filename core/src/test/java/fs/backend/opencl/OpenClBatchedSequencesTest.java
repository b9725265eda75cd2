package fs.backend.opencl;

import fs.backend.Backend;
import fs.model.BatchedSequencesTest;
import fs.model.ModelConfig;

/** Batched sequences on the OpenCL backend's CPU kernel design (PoCL in CI). */
class OpenClBatchedSequencesTest extends BatchedSequencesTest {
    @Override
    protected Backend createBackend() {
        return new OpenClBackend(OpenClTestSupport.device(), KernelDesign.CPU);
    }

    /** As the OpenCL model goldens': the one-row and tiled kernels sum K in different orders. */
    @Override
    protected double batchingTolerance(ModelConfig config, float logit) {
        return 1e-4 + 2e-5 * Math.abs(logit);
    }
}
