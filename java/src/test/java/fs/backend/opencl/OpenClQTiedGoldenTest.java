package fs.backend.opencl;

import fs.backend.Backend;
import fs.model.QTiedGoldenTest;

/** q-tied's GGUF goldens on the OpenCL backend's CPU kernel design (PoCL in CI). */
class OpenClQTiedGoldenTest extends QTiedGoldenTest {
    @Override
    protected Backend createBackend() {
        return new OpenClBackend(OpenClTestSupport.device(), KernelDesign.CPU);
    }
}
