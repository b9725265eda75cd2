package fs.model;

import fs.backend.Backend;
import fs.backend.cpu.VectorBackend;
import java.nio.file.Path;
import java.util.List;

/**
 * The held-out dense Qwen3 (models/q-dense-heldout: other shapes and seed than q-tied — 8 query heads of 64 over 2 kv
 * heads, 3 layers, untied), in the types the repository keeps of it, against its goldens on the Vector API backend.
 */
class CpuQDenseHeldoutGoldenTest extends QTiedGoldenTest {
    static final List<String> KEPT_TYPES = List.of("Q8_0", "Q4_0");

    @Override
    protected Path dir() {
        return Path.of(System.getProperty("fs.repo"), "models", "q-dense-heldout");
    }

    @Override
    protected List<String> types() {
        return KEPT_TYPES;
    }

    @Override
    protected Backend createBackend() {
        return new VectorBackend(2);
    }
}
