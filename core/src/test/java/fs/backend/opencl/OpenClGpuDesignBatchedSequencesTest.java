package fs.backend.opencl;

import fs.backend.Backend;
import fs.model.BatchedSequencesTest;
import fs.model.ModelConfig;

/** Batched sequences through the GPU kernel design, forced on PoCL. */
class OpenClGpuDesignBatchedSequencesTest extends BatchedSequencesTest {
    @Override
    protected Backend createBackend() {
        return new OpenClBackend(OpenClTestSupport.device(), KernelDesign.GPU);
    }

    /** As the OpenCL model goldens': the one-row and tiled kernels sum K in different orders. */
    @Override
    protected double batchingTolerance(ModelConfig config, float logit) {
        return 1e-4 + 2e-5 * Math.abs(logit);
    }
}
