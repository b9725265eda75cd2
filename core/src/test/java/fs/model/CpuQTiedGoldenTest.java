package fs.model;

import fs.backend.Backend;
import fs.backend.cpu.VectorBackend;
import java.util.List;

/** q-tied's GGUF goldens on the Vector API backend with two threads: it reads every format of every file in place. */
class CpuQTiedGoldenTest extends QTiedGoldenTest {
    @Override
    protected List<String> types() {
        return ALL_TYPES;
    }

    @Override
    protected Backend createBackend() {
        return new VectorBackend(2);
    }
}
