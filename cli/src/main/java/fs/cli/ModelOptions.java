package fs.cli;

import fs.FsException;
import fs.HumanSize;
import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.engine.BackendChoice;
import fs.engine.BackendPreparation;
import fs.engine.Engine;
import fs.engine.LoadedModel;
import fs.engine.Offload;
import fs.engine.TensorOverride;
import fs.hub.RepoId;
import fs.model.SingleSequence;
import fs.source.ModelSource;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * The options every command that runs a model shares: which model, where it runs, how big its context is and what its
 * KV cache stores.
 */
final class ModelOptions {
    /**
     * Tokens per forward while processing a prompt. The CPU backend packs each weight once per forward, which at 128
     * rows cost a fifth as much as the matmuls themselves; at 512 it is a twentieth, as in llama.cpp's default ubatch.
     */
    static final int PREFILL_BATCH = 512;

    static final String DEFAULT_MODEL = "Qwen/Qwen3-0.6B";
    /** How a path typed on a command line begins, where a prompt rarely does. */
    private static final List<String> PATH_STARTS = List.of("/", "./", "../", "~/");
    /** More threads than this is a typo, not a machine: each one is a platform thread with its own scratch space. */
    static final int MAX_THREADS = 1024;

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Parameters(index = "0", arity = "0..1", paramLabel = "MODEL",
            description = "A model directory, a .gguf file, a Hugging Face repo id, or repo:QUANT for one GGUF file of a "
                    + "repo (default: " + DEFAULT_MODEL + ").")
    String modelArgument;

    @Option(names = {"-m", "--model"}, paramLabel = "MODEL", description = "The model, instead of the MODEL argument (default: " + DEFAULT_MODEL + ").")
    String modelOption;

    @Option(names = {"-hf", "--hf-repo"}, paramLabel = "REPO",
            description = "The model as llama.cpp's -hf names it, a repo id or repo:QUANT, e.g. "
                    + "Qwen/Qwen3-0.6B-GGUF:Q8_0: the same as MODEL (default: " + DEFAULT_MODEL + ").")
    String huggingFaceRepo;

    private Integer threads;

    @Option(names = {"-c", "--ctx", "--ctx-size"}, paramLabel = "N",
            description = "Context length: positions in the KV cache (default: min(max_position_embeddings, 4096)).")
    Integer ctx;

    @Option(names = "--backend", paramLabel = "KIND", defaultValue = "auto", converter = BackendConverter.class,
            completionCandidates = BackendSpellings.class,
            description = "auto, cpu, java (the CPU on the exact Vector API kernels) or opencl (default: ${DEFAULT-VALUE}).")
    BackendChoice backend;

    /** A backend as --backend spells it; anything else is a usage error listing the spellings. */
    static final class BackendConverter implements ITypeConverter<BackendChoice> {
        @Override
        public BackendChoice convert(String value) {
            return BackendChoice.named(value).orElseThrow(() -> new TypeConversionException(
                    "'" + value + "' is not a backend; choose one of " + BackendChoice.SPELLINGS));
        }
    }

    /** --backend's values, for completion and for the test that tries every enumerated option. */
    static final class BackendSpellings implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(BackendChoice.values()).map(BackendChoice::spelling).iterator();
        }
    }

    @Option(names = "--device", paramLabel = "N",
            description = "OpenCL device index (see fs devices; default: the GPU with the most memory, else the first device).")
    Integer device;

    // Lists, split at commas, for fs bench, which runs its tests once per type as llama-bench does; every other
    // command takes one type (see cacheType).
    @Option(names = {"-ctk", "--cache-type-k"}, paramLabel = "TYPE", split = ",", converter = CacheTypeConverter.class,
            completionCandidates = CacheTypeLabels.class,
            description = "What the KV cache stores keys as: f32, f16, bf16 or q8_0 (default: f16; f32 with --backend "
                    + "java). fs bench takes a comma list, one run of its tests per type.")
    List<KvCacheType> cacheTypeK;

    @Option(names = {"-ctv", "--cache-type-v"}, paramLabel = "TYPE", split = ",", converter = CacheTypeConverter.class,
            completionCandidates = CacheTypeLabels.class,
            description = "What the KV cache stores values as: f32, f16, bf16 or q8_0 (default: f16; f32 with "
                    + "--backend java). fs bench takes a comma list.")
    List<KvCacheType> cacheTypeV;

    /** A KV cache type as llama.cpp names it; anything else is one line listing the types. */
    static final class CacheTypeConverter implements ITypeConverter<KvCacheType> {
        @Override
        public KvCacheType convert(String value) {
            try {
                return KvCacheType.parse(value);
            } catch (FsException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** The KV cache types' names, for completion and for the test that tries every enumerated option. */
    static final class CacheTypeLabels implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(KvCacheType.values()).map(KvCacheType::label).iterator();
        }
    }

    /** The models opened by {@link #load}, kept to tell afterwards whether a failure came from a file that changed. */
    private final List<ModelSource> mapped = new ArrayList<>();

    @Option(names = {"-t", "--threads"}, paramLabel = "N",
            description = "CPU threads (default: the number of available processors).")
    void threads(int n) {
        if (n < 1 || n > MAX_THREADS) {
            throw new ParameterException(command.commandLine(),
                    "-t/--threads must be between 1 and " + MAX_THREADS + ", got " + n);
        }
        threads = n;
    }

    /** -ngl as {@link Offload#gpuLayers(String)} reads it; null when not given. */
    private Integer gpuLayers;

    @Option(names = {"-ngl", "--gpu-layers", "--n-gpu-layers"}, paramLabel = "N|auto|all",
            description = "Layers an OpenCL device runs, counted from the output end as llama.cpp counts them: the last "
                    + "N, the output too when N is above the layer count; all, or auto (as many as its memory holds). "
                    + "The rest runs on the CPU. Needs --backend opencl or auto (default: all).")
    void gpuLayers(String layers) {
        try {
            gpuLayers = Offload.gpuLayers(layers);
        } catch (FsException e) {
            throw new ParameterException(command.commandLine(), e.getMessage());
        }
    }

    @Option(names = {"-cmoe", "--cpu-moe"},
            description = "Keep every mixture of experts (router and experts) on the CPU, the attention where -ngl "
                    + "says; a dense model has none.")
    boolean cpuMoe;

    /** --n-cpu-moe; null when not given. */
    private Integer cpuMoeLayers;

    @Option(names = {"-ncmoe", "--n-cpu-moe"}, paramLabel = "N",
            description = "Keep the mixtures of experts of the first N layers on the CPU (default: 0).")
    void cpuMoeLayers(int layers) {
        if (layers < 0) {
            throw new ParameterException(command.commandLine(), "--n-cpu-moe must be 0 or more, got " + layers);
        }
        cpuMoeLayers = layers;
    }

    @Option(names = {"-ot", "--override-tensor"}, paramLabel = "PATTERN=CPU",
            description = "Keep the feed-forward blocks whose GGUF tensor names (blk.N.ffn_*) PATTERN finds on the CPU, "
                    + "a subset of llama.cpp's: CPU only, whole blocks (-ot exps=CPU is --cpu-moe). Repeatable, or "
                    + "comma-separated (default: none).")
    List<String> overrideTensors = new ArrayList<>();

    /** -fitt in MiB; null when not given. */
    private Integer fitTargetMib;

    @Option(names = {"-fitt", "--fit-target"}, paramLabel = "MiB",
            description = "What -ngl auto leaves free on the device, as llama.cpp's --fit-target; alone it means "
                    + "-ngl auto (default: 1024).")
    void fitTarget(int mib) {
        if (mib < 0) throw new ParameterException(command.commandLine(), "-fitt must be 0 or more MiB, got " + mib);
        fitTargetMib = mib;
    }

    /**
     * What -ngl, --cpu-moe, --n-cpu-moe, -ot and -fitt ask of an OpenCL device; null when none is given (the whole
     * model where --backend says). -ngl other than 0 on the CPU is a usage error.
     */
    Offload offload() {
        if (gpuLayers == null && !cpuMoe && cpuMoeLayers == null && overrideTensors.isEmpty() && fitTargetMib == null) {
            return null;
        }
        if (gpuLayers != null && gpuLayers != 0 && (backend == BackendChoice.CPU || backend == BackendChoice.JAVA)) {
            throw new ParameterException(command.commandLine(), "-ngl " + Offload.spelling(gpuLayers) + " puts layers "
                    + "on an OpenCL device: it needs --backend opencl or auto, not " + backend.spelling());
        }
        List<TensorOverride> overrides = new ArrayList<>();
        try {
            for (String value : overrideTensors) overrides.addAll(TensorOverride.parse(value));
        } catch (FsException e) {
            throw new ParameterException(command.commandLine(), e.getMessage());
        }
        int layers = gpuLayers != null ? gpuLayers : fitTargetMib != null ? Offload.AUTO : Offload.ALL;
        return new Offload(layers, cpuMoe ? Offload.ALL : cpuMoeLayers == null ? 0 : cpuMoeLayers, overrides,
                fitTargetMib == null ? Offload.DEFAULT_FIT_TARGET : (long) fitTargetMib << 20);
    }

    // llama.cpp's other ways to load and run a model, which a user may carry over: each says why fs has no such knob
    // rather than being read as something else. Each takes what value llama.cpp's takes, if any (-fa on).

    @Option(names = {"-fa", "--flash-attn"}, arity = "0..1", paramLabel = "on|off|auto", hidden = true)
    void flashAttention(String mode) {
        throw llamaCppOnly("-fa/--flash-attn", "fs's attention has no variants to choose from");
    }

    @Option(names = {"-b", "--batch-size", "-ub", "--ubatch-size"}, paramLabel = "N", hidden = true)
    void batchSize(String tokens) {
        throw llamaCppOnly("-b/-ub", "fs processes a prompt " + PREFILL_BATCH + " tokens per forward, which is not "
                + "configurable");
    }

    @Option(names = "--mlock", hidden = true)
    void lockInMemory(boolean lock) {
        throw llamaCppOnly("--mlock", "fs maps the weights read-only and does not lock them in memory");
    }

    @Option(names = "--no-mmap", hidden = true)
    void noMapping(boolean noMapping) {
        throw llamaCppOnly("--no-mmap", "fs always maps the weights file (read-only, shared with other processes)");
    }

    private ParameterException llamaCppOnly(String flag, String why) {
        return new ParameterException(command.commandLine(), flag + " is llama.cpp's: " + why);
    }

    /** The model the user named: the MODEL argument, -m or -hf, only one of them; the default when none. */
    String model() {
        Map<String, String> named = new LinkedHashMap<>(); // each model named, and how
        if (modelArgument != null) named.putIfAbsent(modelArgument, "'" + modelArgument + "'");
        if (modelOption != null) named.putIfAbsent(modelOption, "-m '" + modelOption + "'");
        if (huggingFaceRepo != null) named.putIfAbsent(huggingFaceRepo, "-hf '" + huggingFaceRepo + "'");
        if (named.size() > 1) {
            throw new ParameterException(command.commandLine(), "the model is named twice ("
                    + String.join(" and ", named.values()) + "): give MODEL, -m or -hf, once");
        }
        return named.isEmpty() ? DEFAULT_MODEL : named.keySet().iterator().next();
    }

    /**
     * The one positional argument when it is the prompt rather than the model: with -m or -hf naming the model (fs run
     * -m MODEL PROMPT), or when it cannot name one (fs run "Why is the sky blue?", for the default model, see
     * {@link #readsAsPrompt}). Returns it, no longer the model; null when there is none or it is the model.
     */
    String argumentThatIsThePrompt() {
        if (modelArgument == null) return null;
        if (modelOption == null && huggingFaceRepo == null && !readsAsPrompt(modelArgument, Path.of(""))) return null;
        String argument = modelArgument;
        modelArgument = null;
        return argument;
    }

    /**
     * Whether the MODEL argument is words rather than a model: more than one word, as no model name is (a repo id or
     * repo:QUANT is one word), and neither a file or directory in {@code workingDirectory} nor begun as a path or a
     * repo id is (/, ./, ../, ~/, owner/name) nor ended as a GGUF file's name: a model mistyped with a space in it
     * stays a model, which fs then says it cannot find, rather than a prompt for another model.
     */
    static boolean readsAsPrompt(String argument, Path workingDirectory) {
        String text = argument.strip();
        String[] words = text.split("\\s+");
        if (words.length < 2 || isPath(argument, workingDirectory)) return false;
        String first = words[0];
        boolean pathLike = PATH_STARTS.stream().anyMatch(first::startsWith)
                || text.toLowerCase(Locale.ROOT).endsWith(".gguf");
        String repo = first.contains(":") ? first.substring(0, first.lastIndexOf(':')) : first;
        return !pathLike && RepoId.parse(repo).isEmpty();
    }

    private static boolean isPath(String argument, Path workingDirectory) {
        try {
            return Files.exists(workingDirectory.resolve(argument));
        } catch (InvalidPathException e) {
            return false;
        }
    }

    int threadCount() {
        return threads != null ? threads : Runtime.getRuntime().availableProcessors();
    }

    /** The first weights file that changed since {@link #load} mapped it (also after the model is closed). */
    Optional<Path> changedFile() {
        return mapped.stream().flatMap(source -> source.changedFile().stream()).findFirst();
    }

    /** The one type of {@code types} (-ctk's or -ctv's, named {@code flag}); null, the default, when none is given. */
    private KvCacheType cacheType(List<KvCacheType> types, String flag) {
        if (types == null) return null;
        if (types.size() > 1) {
            throw new ParameterException(command.commandLine(), flag + " takes one type here; a comma list is fs "
                    + "bench's");
        }
        return types.getFirst();
    }

    /** -ctk's types, for fs bench: null when none is given (the default). */
    List<KvCacheType> cacheTypesK() {
        return cacheTypeK;
    }

    /** -ctv's types, for fs bench: null when none is given (the default). */
    List<KvCacheType> cacheTypesV() {
        return cacheTypeV;
    }

    /**
     * Resolves, maps and uploads the model, and allocates one sequence on it, whose cache and buffers
     * {@code shapeFor} sizes for the context length. Logs one line on {@code err}.
     */
    LoadedModel<SingleSequence> load(IntFunction<SingleSequence.Shape> shapeFor, PrintWriter err) {
        return load(model(), shapeFor, err);
    }

    /**
     * The same, with {@code beforeUpload} first asking the opened source what the command needs of it (its tokenizer
     * and chat template, for the prompt): what it or {@code shapeFor} throws comes before the weights are loaded.
     */
    LoadedModel<SingleSequence> load(Consumer<ModelSource> beforeUpload, IntFunction<SingleSequence.Shape> shapeFor,
                                     PrintWriter err) {
        return loadWith(beforeUpload, sequence(shapeFor), err);
    }

    /**
     * Loads {@code model} instead of the one the user named, with the same backend, threads, context and cache types
     * (a second model of the command, such as perplexity's KL-divergence base).
     */
    LoadedModel<SingleSequence> load(String model, IntFunction<SingleSequence.Shape> shapeFor, PrintWriter err) {
        return loadWith(model, cacheType(cacheTypeK, "-ctk"), cacheType(cacheTypeV, "-ctv"), sequence(shapeFor), err);
    }

    /** The model the user named with one sequence whose cache stores {@code keys} and {@code values} (fs bench). */
    LoadedModel<SingleSequence> load(KvCacheType keys, KvCacheType values, IntFunction<SingleSequence.Shape> shapeFor,
                                     PrintWriter err) {
        return loadWith(model(), keys, values, sequence(shapeFor), err);
    }

    private static IntFunction<Engine.Allocation<SingleSequence>> sequence(IntFunction<SingleSequence.Shape> shapeFor) {
        return context -> {
            SingleSequence.Shape shape = shapeFor.apply(context);
            return (uploaded, cacheTypes) -> new SingleSequence(uploaded, shape, cacheTypes);
        };
    }

    /**
     * Loads the model the user named through the {@link Engine}, with what {@code sizedFor} allocates on it for the
     * context length (a scheduler, for commands that run several sequences). Logs one line on {@code err}.
     */
    <S> LoadedModel<S> loadWith(IntFunction<Engine.Allocation<S>> sizedFor, PrintWriter err) {
        return loadWith(model(), cacheType(cacheTypeK, "-ctk"), cacheType(cacheTypeV, "-ctv"), sizedFor, err);
    }

    /**
     * The same, with {@code beforeUpload} first asking the opened source what the command needs of it (that it is an
     * embedding model, its tokenizer): what it throws comes before the weights are uploaded.
     */
    <S> LoadedModel<S> loadWith(Consumer<ModelSource> beforeUpload, IntFunction<Engine.Allocation<S>> sizedFor,
                                PrintWriter err) {
        return loadWith(model(), cacheType(cacheTypeK, "-ctk"), cacheType(cacheTypeV, "-ctv"), beforeUpload, sizedFor,
                err);
    }

    /** The same with the cache storing {@code keys} and {@code values} (null: the default), for fs bench. */
    <S> LoadedModel<S> loadWith(KvCacheType keys, KvCacheType values, IntFunction<Engine.Allocation<S>> sizedFor,
                                PrintWriter err) {
        return loadWith(model(), keys, values, sizedFor, err);
    }

    private <S> LoadedModel<S> loadWith(String model, KvCacheType keys, KvCacheType values,
                                        IntFunction<Engine.Allocation<S>> sizedFor, PrintWriter err) {
        return loadWith(model, keys, values, source -> {}, sizedFor, err);
    }

    private <S> LoadedModel<S> loadWith(String model, KvCacheType keys, KvCacheType values,
                                        Consumer<ModelSource> beforeUpload, IntFunction<Engine.Allocation<S>> sizedFor,
                                        PrintWriter err) {
        long start = System.nanoTime();
        Offload offload = offload(); // a usage error, before the model is looked for
        int processors = Runtime.getRuntime().availableProcessors();
        if (threadCount() > processors) {
            err.println("fs: note: " + threadCount() + " threads on " + processors + " available processors: the "
                    + "extra threads wait for a core, which is usually slower");
        }
        // The OpenCL probe and the CPU kernels' set-up (a quarter to half a second) run while the model opens.
        BackendPreparation preparation = BackendPreparation.start(backend, device);
        LoadedModel<S> loaded;
        try {
            ModelSource source = Engine.open(model, err);
            mapped.add(source);
            try {
                beforeUpload.accept(source);
            } catch (RuntimeException e) {
                source.close();
                throw e;
            }
            loaded = Engine.load(source, new Engine.Options(backend, device, threadCount(), ctx, "--ctx", keys,
                    values, offload, err), preparation, sizedFor);
        } catch (RuntimeException e) {
            preparation.settle(); // not exiting in the middle of an OpenCL driver's start-up
            throw e;
        }
        err.printf(Locale.ROOT, "fs: %s: %d layers, context %d, on %s, %s (%.2f s)%n", loaded.source().path(),
                loaded.config().numHiddenLayers(), loaded.contextLength(), loaded.description(),
                cacheSize(loaded.cacheTypes(), loaded.cacheBytesPerPosition(), loaded.contextLength()),
                (System.nanoTime() - start) / 1e9);
        err.flush();
        return loaded;
    }

    /** The load line's "KV cache f16, 112 KiB per position (448 MiB at --ctx 4096)". */
    static String cacheSize(KvCacheTypes types, long bytesPerPosition, int context) {
        return "KV cache " + types + ", " + HumanSize.of(bytesPerPosition) + " per position ("
                + HumanSize.of(bytesPerPosition * context) + " at --ctx " + context + ")";
    }
}
