package fs.model;

import fs.backend.Backend;
import fs.backend.cpu.VectorBackend;
import java.nio.file.Path;
import java.util.List;

/**
 * q-moe (models/q-moe: a Qwen3-MoE, 8 experts of which 3 run per token, as llama.cpp's llama-quantize wrote it in
 * every type fs reads) on the Vector API backend against the float64 goldens of each file's exact weights: the router,
 * the top-k choice and the expert matmuls read every format's 3-D expert stacks in place.
 */
class CpuQMoeGoldenTest extends QTiedGoldenTest {
    static Path qMoe() {
        return Path.of(System.getProperty("fs.repo"), "models", "q-moe");
    }

    @Override
    protected Path dir() {
        return qMoe();
    }

    @Override
    protected List<String> types() {
        return ALL_TYPES;
    }

    @Override
    protected Backend createBackend() {
        return new VectorBackend(2);
    }
}
