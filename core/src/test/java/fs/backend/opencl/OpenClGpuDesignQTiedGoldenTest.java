package fs.backend.opencl;

import fs.backend.Backend;
import fs.model.QTiedGoldenTest;
import java.util.List;

/** q-tied's GGUF goldens through the GPU kernel design, forced on PoCL (CI has no GPU). */
class OpenClGpuDesignQTiedGoldenTest extends QTiedGoldenTest {
    @Override
    protected List<String> types() {
        return ALL_TYPES;
    }

    @Override
    protected Backend createBackend() {
        return new OpenClBackend(OpenClTestSupport.device(), KernelDesign.GPU);
    }
}
