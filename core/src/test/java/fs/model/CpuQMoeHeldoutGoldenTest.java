package fs.model;

import fs.backend.Backend;
import fs.backend.cpu.VectorBackend;
import java.nio.file.Path;
import java.util.List;

/**
 * The held-out Qwen3-MoE (models/q-moe-heldout: other shapes and seeds than q-moe — hidden 512, 3 layers, 16 experts
 * of which 4 run, untied), in the types the repository keeps of it, against its goldens on the Vector API backend.
 */
class CpuQMoeHeldoutGoldenTest extends QTiedGoldenTest {
    static final List<String> KEPT_TYPES = List.of("Q4_K_M", "Q2_K", "IQ2_XXS");

    static Path heldout() {
        return Path.of(System.getProperty("fs.repo"), "models", "q-moe-heldout");
    }

    @Override
    protected Path dir() {
        return heldout();
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
