package fs.engine;

import fs.FsException;
import fs.HumanSize;
import fs.backend.Backend;
import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.backend.cpu.CpuKernels;
import fs.backend.cpu.VectorBackend;
import fs.backend.opencl.OpenCl;
import fs.backend.opencl.OpenClBackend;
import fs.hub.ModelResolver;
import fs.model.DecoderModel;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.ParameterCount;
import fs.source.ModelSource;
import fs.model.Placement;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * How every front end (fs.api, each model command of the CLI, {@code fs serve}) loads a model: it resolves the model
 * as the user named it ({@link #open}), then binds its weights, creates the backend chosen, uploads the weights and
 * allocates on that backend what the caller will run ({@link #load}). The rules they share live here once: the
 * default context length, the default types of the KV cache ({@link #cacheTypes}), and that {@link BackendChoice#AUTO}
 * falls back to the CPU, saying why on the log, when there is no OpenCL GPU, its kernels do not build, or the model
 * and the caller's state do not fit it. The sequences and schedulers are the caller's: the engine sizes nothing but
 * the context and settles nothing else but the cache's types.
 */
public final class Engine {
    /**
     * Most prompt tokens one scheduler step runs beside the decode rows (fs serve, fs.api): a long prompt is
     * prefilled in chunks this size, so the other chats wait at most one chunk's forward for their next token.
     */
    public static final int PREFILL_CHUNK = 256;
    /** The default context length when the model allows more: 4096 positions of KV cache, as llama.cpp's default. */
    private static final int DEFAULT_CONTEXT = 4096;

    private Engine() {}

    /**
     * Where the model runs and how long its context is.
     *
     * @param backend        the backend chosen
     * @param device         an OpenCL device index (null: the GPU with the most memory, else the first device)
     * @param threads        the CPU backend's threads
     * @param contextLength  KV cache positions (null: {@link #defaultContextLength}); must be in 1..the model's
     *                       max_position_embeddings
     * @param contextSetting how the user sets the context length, named in the error when it is out of range
     *                       ("--ctx", "the context length")
     * @param cacheTypeK     what the KV cache stores keys as (null: the default, see {@link #cacheTypes})
     * @param cacheTypeV     what the KV cache stores values as (null: the default)
     * @param offload        how much of the model an OpenCL device runs, the rest on the CPU (null: all of it, as
     *                       without -ngl); {@code gpuLayers} other than 0 needs {@code backend} opencl or auto
     * @param log            where the weights' notes, the offload plan and the fallback to the CPU are said
     */
    public record Options(BackendChoice backend, Integer device, int threads, Integer contextLength,
                          String contextSetting, KvCacheType cacheTypeK, KvCacheType cacheTypeV, Offload offload,
                          PrintWriter log) {
        public Options {
            Objects.requireNonNull(backend, "backend");
            if (offload != null && offload.gpuLayers() != 0
                    && (backend == BackendChoice.CPU || backend == BackendChoice.JAVA)) {
                throw new FsException("-ngl " + Offload.spelling(offload.gpuLayers()) + " puts layers on an OpenCL "
                        + "device: it needs --backend opencl or auto, not " + backend.spelling());
            }
            if (threads < 1) throw new FsException("threads must be at least 1, got " + threads);
            Objects.requireNonNull(contextSetting, "contextSetting");
            Objects.requireNonNull(log, "log");
        }
    }

    /**
     * Allocates what the caller runs on a model (its KV cache and buffers), sized beforehand; the cache's keys and
     * values stored as {@code cacheTypes}, which the engine settles on for the backend the model is on.
     */
    @FunctionalInterface
    public interface Allocation<S> {
        S allocate(DecoderModel model, KvCacheTypes cacheTypes);
    }

    /**
     * Resolves and opens {@code model}: a model directory (config.json, *.safetensors, tokenizer.json), a .gguf file,
     * a Hugging Face repo id or {@code repo:QUANT} for one GGUF file of a repo, downloaded into the Hugging Face cache
     * (progress on {@code log}) when it is not there. The caller hands the source to {@link #load} or closes it.
     */
    public static ModelSource open(String model, PrintWriter log) {
        return ModelSource.open(ModelResolver.resolve(model, log));
    }

    /** min(the model's max_position_embeddings, 4096): the context length when none is given. */
    public static int defaultContextLength(ModelConfig config) {
        return Math.min(config.maxPositionEmbeddings(), DEFAULT_CONTEXT);
    }

    /**
     * The types of the KV cache: each one {@code options} name, else the default, llama.cpp's f16, but float32 on
     * {@link BackendChoice#JAVA}, the exact path the others are checked against. Every backend stores every type.
     */
    public static KvCacheTypes cacheTypes(Options options) {
        KvCacheType byDefault = options.backend() == BackendChoice.JAVA ? KvCacheType.F32 : KvCacheType.F16;
        return new KvCacheTypes(Objects.requireNonNullElse(options.cacheTypeK(), byDefault),
                Objects.requireNonNullElse(options.cacheTypeV(), byDefault));
    }

    /**
     * Makes {@code source} ready to run on the backend {@code options} choose, and owns it from now on (it is closed
     * when this fails, else with the loaded model). {@code sizedFor} gets the context length before anything is
     * created, so that what it throws (a context too small for the caller's use) comes before the upload, which takes
     * long, as does a cache type the model's heads do not fit; the allocation it returns runs after the upload, on the
     * same backend, with the cache types settled for it ({@link #cacheTypes}), and under the same fallback.
     */
    public static <S> LoadedModel<S> load(ModelSource source, Options options, IntFunction<Allocation<S>> sizedFor) {
        List<Backend> created = new ArrayList<>(); // closed if this fails
        try {
            ModelConfig config = source.config();
            int contextLength = contextLength(config, options);
            Allocation<S> allocation = sizedFor.apply(contextLength);
            // The defaults fit every head: this checks the types the caller named (q8_0 needs whole blocks).
            cacheTypes(options).checkedFor(config.headDim());
            ModelWeights weights = ModelWeights.bind(config, source.tensors());
            for (String note : weights.notes()) options.log().println("fs: " + source.path() + ": " + note);
            ParameterCount parameters = ParameterCount.of(config);
            if (parameters.sparse()) { // a mixture of experts: what it is, and what a token of it costs
                options.log().println("fs: " + config.architecture().displayName() + ", "
                        + ParameterCount.label(parameters.total()) + " parameters ("
                        + ParameterCount.label(parameters.active()) + " active per token), "
                        + HumanSize.of(weights.bytes()) + " of weights mapped");
            }
            // -ot's patterns against the model before a backend is made: one that matches nothing is the user's
            // mistake, not a device's failure for auto to fall back from.
            if (options.offload() != null) OffloadPlan.cpuFeedForwards(options.offload(), config);
            Backend backend = createBackend(options);
            created.add(backend);
            DecoderModel model;
            KvCacheTypes cacheTypes;
            S state;
            try {
                model = place(config, weights, backend, options, contextLength, created);
                cacheTypes = cacheTypes(options);
                state = allocation.allocate(model, cacheTypes);
            } catch (FsException e) {
                // auto promises to run: a device that cannot hold the model (or build its kernels) means the CPU.
                if (options.backend() != BackendChoice.AUTO || backend instanceof VectorBackend) throw e;
                closeAll(created);
                created.clear(); // closed: if the CPU backend cannot be made either, there is nothing left to close
                backend = onTheCpu(e.getMessage(), options);
                created.add(backend);
                model = new DecoderModel(config, weights, backend);
                cacheTypes = cacheTypes(options);
                state = allocation.allocate(model, cacheTypes);
            }
            List<Backend> used = model.placement().backends();
            closeAll(created.stream().filter(b -> !used.contains(b)).toList()); // the device of -ngl 0
            options.log().flush();
            return new LoadedModel<>(source, model, description(model), contextLength, cacheTypes, state);
        } catch (RuntimeException | Error e) {
            closeAll(created);
            source.close();
            throw e;
        }
    }

    /**
     * The model on {@code backend}, or split between it and the CPU as {@code options}' offload plans it when it is an
     * OpenCL device; a CPU backend made for the split is added to {@code created}.
     */
    private static DecoderModel place(ModelConfig config, ModelWeights weights, Backend backend, Options options,
            int contextLength, List<Backend> created) {
        if (options.offload() == null || !(backend instanceof OpenClBackend device)) {
            return new DecoderModel(config, weights, backend);
        }
        long layerCache = cacheTypes(options).bytesPerPosition(1, config.numKeyValueHeads(), config.headDim())
                * contextLength;
        long memory = device.memorySize();
        OffloadPlan plan = OffloadPlan.of(options.offload(), config, weights, layerCache, memory);
        String asked = Offload.spelling(options.offload().gpuLayers());
        if (plan.deviceWeightBytes() + plan.deviceCacheBytes() > memory) {
            throw OffloadPlan.doesNotFit(asked, plan, memory);
        }
        options.log().println("fs: " + plan.line(asked, device.description()));
        if (plan.wholeOnDevice()) return new DecoderModel(config, weights, device);
        Backend cpu = new VectorBackend(options.threads());
        created.add(cpu);
        return new DecoderModel(config, weights, plan.placement(device, cpu));
    }

    /** Where the model runs: its backend's description, or for a split the device's share and the CPU's. */
    private static String description(DecoderModel model) {
        Placement placement = model.placement();
        if (placement.single()) return placement.output().description();
        long offloaded = placement.layers().stream().filter(l -> l.attention() != placement.input()).count();
        Backend device = placement.backends().stream().filter(b -> b instanceof OpenClBackend).findFirst()
                .orElseThrow();
        Backend cpu = placement.input();
        return device.description() + " with " + offloaded + "/" + placement.layers().size() + " layers"
                + (placement.output() == device ? " and the output" : "") + ", the rest on " + cpu.description();
    }

    /** Closes each of {@code backends}, the first failure thrown after all were tried. */
    static void closeAll(List<Backend> backends) {
        RuntimeException failure = null;
        for (Backend backend : backends) {
            try {
                backend.close();
            } catch (RuntimeException e) {
                if (failure == null) failure = e;
                else failure.addSuppressed(e);
            }
        }
        if (failure != null) throw failure;
    }

    private static int contextLength(ModelConfig config, Options options) {
        if (options.contextLength() == null) return defaultContextLength(config);
        int context = options.contextLength();
        int max = config.maxPositionEmbeddings();
        if (context < 1 || context > max) {
            throw new FsException(options.contextSetting() + " " + context + " is out of range: this model allows 1.."
                    + max + " positions");
        }
        return context;
    }

    /**
     * cpu runs the CPU's default kernels ({@link CpuKernels#fromEnvironment}), java the Vector API kernels alone;
     * opencl also takes OpenCL CPU devices (PoCL) and fails when there is none; auto takes an OpenCL GPU when there is
     * one whose kernels build, and otherwise the CPU.
     */
    private static Backend createBackend(Options options) {
        return switch (options.backend()) {
            case CPU -> new VectorBackend(options.threads());
            case JAVA -> new VectorBackend(options.threads(), CpuKernels.vectorApi());
            case OPENCL -> switch (OpenCl.select(true, options.device())) {
                case OpenCl.Selection.Selected selected -> new OpenClBackend(selected.device());
                case OpenCl.Selection.NotSelected notSelected ->
                        throw new FsException("--backend opencl: " + notSelected.reason());
            };
            case AUTO -> switch (OpenCl.select(false, options.device())) {
                case OpenCl.Selection.Selected selected -> {
                    try {
                        yield new OpenClBackend(selected.device());
                    } catch (FsException e) { // e.g. the kernels do not build on this driver
                        yield onTheCpu(e.getMessage(), options);
                    }
                }
                case OpenCl.Selection.NotSelected notSelected -> onTheCpu(notSelected.reason(), options);
            };
        };
    }

    /** auto's fallback: the CPU backend, and the one line that says why. */
    private static Backend onTheCpu(String why, Options options) {
        options.log().println("fs: running on the CPU: " + why);
        options.log().flush();
        return new VectorBackend(options.threads());
    }
}
