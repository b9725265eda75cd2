package fs.backend.opencl;

import fs.backend.Backend;
import fs.model.QTiedGoldenTest;

/** q-tied's GGUF goldens through the GPU kernel design, forced on PoCL (CI has no GPU). */
class OpenClGpuDesignQTiedGoldenTest extends QTiedGoldenTest {
    @Override
    protected Backend createBackend() {
        return new OpenClBackend(OpenClTestSupport.device(), KernelDesign.GPU);
    }
}
