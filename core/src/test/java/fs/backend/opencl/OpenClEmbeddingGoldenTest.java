package fs.backend.opencl;

import fs.backend.Backend;
import fs.embed.EmbeddingGoldenTest;

/**
 * The embedding and rerank goldens on the OpenCL backend (PoCL in CI), batched and alone agreeing to a tolerance (its
 * one-row and tiled kernels sum in different orders, see OpenClModelGoldenTest).
 */
class OpenClEmbeddingGoldenTest extends EmbeddingGoldenTest {
    @Override
    protected Backend createBackend() {
        return new OpenClBackend(OpenClTestSupport.device(), KernelDesign.CPU);
    }
}
