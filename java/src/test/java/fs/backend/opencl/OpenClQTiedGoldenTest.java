package fs.backend.opencl;

import fs.backend.Backend;
import fs.model.QTiedGoldenTest;
import java.util.List;

/** q-tied's GGUF goldens on the OpenCL backend's CPU kernel design (PoCL in CI). */
class OpenClQTiedGoldenTest extends QTiedGoldenTest {
    /** The float file: the block kernels (BlockKernels) are not yet the backend's matmul. */
    @Override
    protected List<String> types() {
        return List.of("BF16");
    }

    @Override
    protected Backend createBackend() {
        return new OpenClBackend(OpenClTestSupport.device(), KernelDesign.CPU);
    }
}
