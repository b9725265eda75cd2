package fs.backend.opencl;

import fs.backend.Backend;
import fs.model.QTiedGoldenTest;
import java.nio.file.Path;
import java.util.List;

/** q-moe's GGUF goldens on the OpenCL backend's CPU kernel design (PoCL in CI): the expert ops on the device. */
class OpenClQMoeGoldenTest extends QTiedGoldenTest {
    @Override
    protected Path dir() {
        return Path.of(System.getProperty("fs.repo"), "models", "q-moe");
    }

    @Override
    protected List<String> types() {
        return ALL_TYPES;
    }

    @Override
    protected Backend createBackend() {
        return new OpenClBackend(OpenClTestSupport.device(), KernelDesign.CPU);
    }
}
