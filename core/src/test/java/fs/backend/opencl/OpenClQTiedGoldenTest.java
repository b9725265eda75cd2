package fs.backend.opencl;

import fs.backend.Backend;
import fs.model.QTiedGoldenTest;
import java.util.List;

/** q-tied's GGUF goldens on the OpenCL backend's CPU kernel design (PoCL in CI). */
class OpenClQTiedGoldenTest extends QTiedGoldenTest {
    @Override
    protected List<String> types() {
        return ALL_TYPES;
    }

    @Override
    protected Backend createBackend() {
        return new OpenClBackend(OpenClTestSupport.device(), KernelDesign.CPU);
    }
}
