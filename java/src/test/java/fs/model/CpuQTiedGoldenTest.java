package fs.model;

import fs.backend.Backend;
import fs.backend.cpu.VectorBackend;

/** q-tied's GGUF goldens on the Vector API backend with two threads. */
class CpuQTiedGoldenTest extends QTiedGoldenTest {
    @Override
    protected Backend createBackend() {
        return new VectorBackend(2);
    }
}
