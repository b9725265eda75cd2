package fs.cli;

import fs.FsException;
import fs.backend.Backend;
import fs.backend.Backends;
import fs.backend.cpu.VectorBackend;
import fs.generate.GenerationConfig;
import fs.hub.ModelResolver;
import fs.model.Qwen3Config;
import fs.model.Qwen3Model;
import fs.model.Qwen3Weights;
import fs.safetensors.Checkpoint;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.IntFunction;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The options every command that runs a model shares: which model, where it runs, how big its context is. */
final class ModelOptions {
    /**
     * Tokens per forward while processing a prompt. The CPU backend packs each weight once per forward, which at 128
     * rows cost a fifth as much as the matmuls themselves; at 512 it is a twentieth, as in llama.cpp's default ubatch.
     */
    static final int PREFILL_BATCH = 512;

    @Parameters(index = "0", arity = "0..1", paramLabel = "MODEL", defaultValue = "Qwen/Qwen3-0.6B",
            description = "A model directory or a Hugging Face repo id (default: ${DEFAULT-VALUE}).")
    String model;

    @Option(names = {"-t", "--threads"}, paramLabel = "N",
            description = "CPU threads (default: the number of available processors).")
    Integer threads;

    @Option(names = "--ctx", paramLabel = "N",
            description = "Context length: positions in the KV cache (default: min(max_position_embeddings, 4096)).")
    Integer ctx;

    @Option(names = "--backend", paramLabel = "KIND", defaultValue = "auto",
            description = "auto, cpu or opencl (default: ${DEFAULT-VALUE}).")
    String backend;

    @Option(names = "--device", paramLabel = "N", description = "OpenCL device index (see fs devices).")
    Integer device;

    int threadCount() {
        int n = threads != null ? threads : Runtime.getRuntime().availableProcessors();
        if (n < 1) throw new FsException("--threads must be at least 1, got " + n);
        return n;
    }

    /**
     * Resolves, maps and uploads the model; {@code shapeFor} sizes its buffers for the context length. Logs one line
     * on {@code err}.
     */
    LoadedModel load(IntFunction<Qwen3Model.Shape> shapeFor, PrintWriter err) {
        long start = System.nanoTime();
        Path dir = ModelResolver.resolve(model, err);
        Qwen3Config config = Qwen3Config.read(dir.resolve("config.json"));
        int contextLength = contextLength(config);
        GenerationConfig generationConfig = GenerationConfig.read(dir);
        Checkpoint checkpoint = Checkpoint.open(dir);
        Backend created = null;
        try {
            Qwen3Weights weights = Qwen3Weights.bind(config, checkpoint);
            Qwen3Model.Shape shape = shapeFor.apply(contextLength);
            created = Backends.create(backend, device, threadCount(), err);
            Qwen3Model loaded;
            try {
                loaded = new Qwen3Model(config, weights, created, shape);
            } catch (FsException e) {
                // auto promises to run: a device that cannot hold the model (or build its kernels) means the CPU.
                if (!backend.equals("auto") || created instanceof VectorBackend) throw e;
                created.close();
                created = null;
                err.println("fs: running on the CPU: " + e.getMessage());
                created = new VectorBackend(threadCount());
                loaded = new Qwen3Model(config, weights, created, shape);
            }
            err.printf(Locale.ROOT, "fs: %s: %d layers, context %d, on %s (%.2f s)%n", dir, config.numHiddenLayers(),
                    contextLength, created.description(), (System.nanoTime() - start) / 1e9);
            err.flush();
            return new LoadedModel(dir, generationConfig, checkpoint, created, loaded);
        } catch (RuntimeException | Error e) {
            if (created != null) created.close();
            checkpoint.close();
            throw e;
        }
    }

    private int contextLength(Qwen3Config config) {
        int max = config.maxPositionEmbeddings();
        if (ctx == null) return Math.min(max, 4096);
        if (ctx < 1 || ctx > max) {
            throw new FsException("--ctx " + ctx + " is out of range: this model allows 1.." + max + " positions");
        }
        return ctx;
    }
}
