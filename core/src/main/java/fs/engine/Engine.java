package fs.engine;

import fs.FsException;
import fs.HumanSize;
import fs.backend.Backend;
import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.backend.cpu.CpuKernels;
import fs.backend.cpu.VectorBackend;
import fs.backend.opencl.DeviceOutOfMemoryException;
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
 * default context length, the default types of the KV cache ({@link #cacheTypes}), that {@link BackendChoice#AUTO}
 * falls back to the CPU, saying why on the log, when there is no OpenCL GPU or its kernels do not build, and what a
 * device that runs out of memory while loading means ({@link #placed}). The sequences and schedulers are the caller's: the engine sizes nothing but
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
        return load(source, options, BackendPreparation.whenAsked(options.backend(), options.device()), sizedFor);
    }

    /**
     * The same, with the backend's preparation begun earlier ({@link BackendPreparation#start}, for the backend and
     * device {@code options} name), so that it ran while the source opened.
     */
    public static <S> LoadedModel<S> load(ModelSource source, Options options, BackendPreparation preparation,
                                          IntFunction<Allocation<S>> sizedFor) {
        if (!preparation.isFor(options.backend(), options.device())) {
            throw new IllegalArgumentException("the preparation is for another backend than " + options);
        }
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
            created.add(createBackend(options, preparation));
            Placed<S> placed = placed(config, weights, options, preparation, contextLength, allocation, created);
            DecoderModel model = placed.model();
            List<Backend> used = model.placement().backends();
            closeAll(created.stream().filter(b -> !used.contains(b)).toList()); // the device of -ngl 0
            options.log().flush();
            return new LoadedModel<>(source, model, description(model), contextLength, placed.cacheTypes(),
                    placed.state());
        } catch (RuntimeException | Error e) {
            closeAll(created);
            source.close();
            throw e;
        }
    }

    /** A model on its backends, with the cache types settled for them and the caller's allocation on it. */
    private record Placed<S>(DecoderModel model, KvCacheTypes cacheTypes, S state) {}

    /**
     * The model on the backend {@code created} holds, placed as {@code options} offload it, and the caller's
     * allocation on it. A device that runs out of memory partway (or whose plan is larger than it) fails the load in
     * one line when the user fixed how much goes there (-ngl N or all; --backend opencl without -ngl), as llama.cpp
     * does; when fs chooses (-ngl auto; --backend auto without -ngl) the device's memory of the failed attempt is freed
     * and the model placed again with the layers that fit what the device held when it ran out, as Ollama re-plans,
     * saying so in one line: fewer layers each time, none meaning the CPU. Under --backend auto any other failure of
     * the device (its kernels do not build) means the CPU, as before.
     */
    private static <S> Placed<S> placed(ModelConfig config, ModelWeights weights, Options options,
            BackendPreparation preparation, int contextLength, Allocation<S> allocation, List<Backend> created) {
        Offload offload = options.offload();
        String replanned = "";
        while (true) {
            Backend backend = created.getFirst();
            DeviceOutOfMemoryException outOfMemory;
            try {
                DecoderModel model = place(config, weights, backend, offload, replanned, options, preparation,
                        contextLength, created);
                KvCacheTypes cacheTypes = cacheTypes(options);
                return new Placed<>(model, cacheTypes, allocation.allocate(model, cacheTypes));
            } catch (DeviceOutOfMemoryException e) {
                outOfMemory = e;
            } catch (FsException e) {
                // auto promises to run: a device that cannot run the model means the CPU.
                if (options.backend() != BackendChoice.AUTO || backend instanceof VectorBackend) throw e;
                return onTheCpu(e.getMessage(), config, weights, options, preparation, allocation, created);
            }
            OpenClBackend device = (OpenClBackend) backend;
            Offload tried = Objects.requireNonNullElse(offload, new Offload(Offload.ALL, 0, List.of()));
            OffloadPlan failed = plan(tried, config, weights, options, contextLength, device.memorySize());
            // what fits what the device held, with auto's fit target, and fewer layers than failed
            int fits = Math.min(plan(tried.withGpuLayers(Offload.AUTO), config, weights, options, contextLength,
                    outOfMemory.inUse()).gpuLayers(), failed.gpuLayers() - 1);
            boolean fsChooses = offload == null ? options.backend() == BackendChoice.AUTO
                    : offload.gpuLayers() == Offload.AUTO;
            if (!fsChooses) {
                throw new FsException((offload == null ? "the model" : "-ngl " + Offload.spelling(offload.gpuLayers()))
                        + " does not fit " + device.description() + ": " + failed.deviceLine() + ", and "
                        + ranOut(outOfMemory, device) + "; offload fewer layers with -ngl (-ngl auto would take "
                        + Math.max(0, fits) + ")");
            }
            String why = device.description() + " ran out of memory: " + failed.deviceLine() + ", and "
                    + ranOut(outOfMemory, device);
            closeAll(created); // the failed attempt's device memory freed before the next
            created.clear();
            if (fits <= 0) return onTheCpu(why, config, weights, options, preparation, allocation, created);
            created.add(createBackend(options, preparation));
            offload = tried.withGpuLayers(fits);
            replanned = why + ": ";
        }
    }

    /** What a device out of memory was seen to hold: all of it, when the plan was larger than the device. */
    private static String ranOut(DeviceOutOfMemoryException e, OpenClBackend device) {
        return e.inUse() == device.memorySize() ? "it has " + HumanSize.of(e.inUse())
                : "it ran out at " + HumanSize.of(e.inUse()) + " in use";
    }

    /**
     * The model on {@code backend}, or split between it and the CPU as {@code offload} plans it when it is an OpenCL
     * device, the plan said on the log after {@code replanned}; a CPU backend made for the split is added to
     * {@code created}. A plan larger than the device is a {@link DeviceOutOfMemoryException} before any upload.
     */
    private static DecoderModel place(ModelConfig config, ModelWeights weights, Backend backend, Offload offload,
            String replanned, Options options, BackendPreparation preparation, int contextLength,
            List<Backend> created) {
        if (offload == null || !(backend instanceof OpenClBackend device)) {
            return new DecoderModel(config, weights, backend);
        }
        long memory = device.memorySize();
        OffloadPlan plan = plan(offload, config, weights, options, contextLength, memory);
        if (plan.deviceWeightBytes() + plan.deviceCacheBytes() > memory) {
            throw new DeviceOutOfMemoryException("the plan is larger than the device", memory);
        }
        String asked = Offload.spelling(replanned.isEmpty() ? offload.gpuLayers() : Offload.AUTO);
        options.log().println("fs: " + replanned + plan.line(asked, device.description()));
        if (plan.wholeOnDevice()) return new DecoderModel(config, weights, device);
        Backend cpu = new VectorBackend(options.threads(), preparation.cpuKernels());
        created.add(cpu);
        return new DecoderModel(config, weights, plan.placement(device, cpu));
    }

    /** {@code offload}'s plan for a device of {@code deviceMemory} bytes, each layer's cache at the context length. */
    private static OffloadPlan plan(Offload offload, ModelConfig config, ModelWeights weights, Options options,
            int contextLength, long deviceMemory) {
        long layerCache = cacheTypes(options).bytesPerPosition(1, config.numKeyValueHeads(), config.headDim())
                * contextLength;
        return OffloadPlan.of(offload, config, weights, layerCache, deviceMemory);
    }

    /** auto's fallback: the whole model on a CPU backend, said in one line, and the caller's allocation on it. */
    private static <S> Placed<S> onTheCpu(String why, ModelConfig config, ModelWeights weights, Options options,
            BackendPreparation preparation, Allocation<S> allocation, List<Backend> created) {
        closeAll(created);
        created.clear(); // closed: if the CPU backend cannot be made either, there is nothing left to close
        Backend cpu = onTheCpu(why, options, preparation);
        created.add(cpu);
        DecoderModel model = new DecoderModel(config, weights, cpu);
        KvCacheTypes cacheTypes = cacheTypes(options);
        return new Placed<>(model, cacheTypes, allocation.allocate(model, cacheTypes));
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
    private static Backend createBackend(Options options, BackendPreparation preparation) {
        return switch (options.backend()) {
            case CPU -> new VectorBackend(options.threads(), preparation.cpuKernels());
            case JAVA -> new VectorBackend(options.threads(), CpuKernels.vectorApi());
            case OPENCL -> switch (preparation.openClSelection()) {
                case OpenCl.Selection.Selected selected -> new OpenClBackend(selected.device());
                case OpenCl.Selection.NotSelected notSelected ->
                        throw new FsException("--backend opencl: " + notSelected.reason());
            };
            case AUTO -> switch (preparation.openClSelection()) {
                case OpenCl.Selection.Selected selected -> {
                    try {
                        yield new OpenClBackend(selected.device());
                    } catch (FsException e) { // e.g. the kernels do not build on this driver
                        yield onTheCpu(e.getMessage(), options, preparation);
                    }
                }
                case OpenCl.Selection.NotSelected notSelected ->
                        onTheCpu(notSelected.reason(), options, preparation);
            };
        };
    }

    /** auto's fallback: the CPU backend, and the one line that says why. */
    private static Backend onTheCpu(String why, Options options, BackendPreparation preparation) {
        options.log().println("fs: running on the CPU: " + why);
        options.log().flush();
        return new VectorBackend(options.threads(), preparation.cpuKernels());
    }
}
