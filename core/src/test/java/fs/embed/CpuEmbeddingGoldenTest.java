package fs.embed;

import fs.backend.Backend;
import fs.backend.cpu.VectorBackend;

/** The embedding and rerank goldens on the CPU backend's default kernels (native where the library is built). */
class CpuEmbeddingGoldenTest extends EmbeddingGoldenTest {
    @Override
    protected Backend createBackend() {
        return new VectorBackend(2);
    }
}
