package fs.embed;

import fs.backend.Backend;
import fs.backend.cpu.CpuKernels;
import fs.backend.cpu.VectorBackend;

/** The embedding and rerank goldens on the exact path: the CPU backend on the Vector API kernels alone. */
class JavaEmbeddingGoldenTest extends EmbeddingGoldenTest {
    @Override
    protected Backend createBackend() {
        return new VectorBackend(2, CpuKernels.vectorApi());
    }
}
