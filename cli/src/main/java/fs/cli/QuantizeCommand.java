package fs.cli;

import fs.FsException;
import fs.HumanSize;
import fs.format.RowQuantizer;
import fs.format.RowQuantizers;
import fs.gguf.GgufValue;
import fs.hub.ModelResolver;
import fs.model.FeedForward;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.Pooling;
import fs.model.TensorNaming;
import fs.model.TensorRole;
import fs.progress.Terminal;
import fs.quantize.ImportanceMatrix;
import fs.quantize.QuantizationMetadata;
import fs.quantize.QuantizationPlan;
import fs.quantize.QuantizationProgress;
import fs.quantize.QuantizationRun;
import fs.quantize.QuantizationType;
import fs.source.GgufSource;
import fs.source.HuggingFaceSource;
import fs.source.ModelSource;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

@Command(name = "quantize", mixinStandardHelpOptions = true,
        description = "Writes a model (a Hugging Face directory of bf16 safetensors, or a GGUF file) as a GGUF file in "
                + "one of llama.cpp's types, with llama.cpp's per-tensor mix; llama.cpp and fs both load it.")
final class QuantizeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODEL", description = "A model directory, a .gguf file, a Hugging Face repo "
            + "id or repo:QUANT.")
    String model;

    @Option(names = {"-o", "--output"}, paramLabel = "OUT.gguf", required = true,
            description = "The file to write (required; replaced only once complete).")
    Path output;

    /** docs/QUANTIZATION.md's decision: the fastest format within its quality budget on the trained model. */
    @Option(names = "--type", paramLabel = "T", defaultValue = "Q4_K_M", converter = TypeConverter.class,
            completionCandidates = TypeNames.class,
            description = "Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q4_K_S, Q4_0, Q2_K, IQ2_XXS (needs --imatrix), F16 or BF16 "
                    + "(default: ${DEFAULT-VALUE}, see docs/QUANTIZATION.md).")
    QuantizationType preset;

    /** A type fs quantize makes, in any case; anything else is a usage error listing them. */
    static final class TypeConverter implements ITypeConverter<QuantizationType> {
        @Override
        public QuantizationType convert(String value) {
            try {
                return QuantizationType.parse(value);
            } catch (FsException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** --type's values, for completion and for the test that tries every enumerated option. */
    static final class TypeNames implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(QuantizationType.values()).map(Enum::name).iterator();
        }
    }

    @Option(names = "--imatrix", paramLabel = "FILE",
            description = "An importance matrix (fs imatrix or llama-imatrix) that weighs the quantization (default: "
                    + "none; IQ2_XXS requires one).")
    Path imatrix;

    private int threads = Runtime.getRuntime().availableProcessors();

    @Option(names = {"-t", "--threads"}, paramLabel = "N",
            description = "Threads that quantize tensors (default: the number of available processors).")
    void threads(int n) {
        if (n < 1 || n > ModelOptions.MAX_THREADS) {
            throw new ParameterException(spec.commandLine(),
                    "-t/--threads must be between 1 and " + ModelOptions.MAX_THREADS + ", got " + n);
        }
        threads = n;
    }

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        ImportanceMatrix importance = imatrix == null ? null : ImportanceMatrix.read(imatrix);
        Path path = ModelResolver.resolve(model, err);
        checkOutput(path);
        try (ModelSource source = ModelSource.open(path)) {
            ModelConfig config = source.config();
            checkWritable(config);
            ModelWeights bound = ModelWeights.bind(config, source.tensors());
            if (bound.rerankHead() != null) {
                throw new FsException(path + " is llama.cpp's reranker GGUF (pooling_type rank), whose classifier head"
                        + " fs quantize does not carry: quantize the checkpoint it was made from instead");
            }
            Map<String, List<Tensor>> tensors = ggufTensors(config, bound);
            List<Tensor> planned = new ArrayList<>();
            tensors.forEach((name, parts) -> planned.add(parts.size() == 1 ? parts.getFirst() : stacked(name, parts)));
            QuantizationPlan plan = QuantizationPlan.of(preset, config, planned, importance != null);
            if (importance == null) {
                plan.firstNeedingImportance().ifPresent(entry -> {
                    throw new FsException("--type " + preset + " needs an importance matrix (--imatrix FILE, made by "
                            + "fs imatrix or llama-imatrix), as llama.cpp requires: " + entry.name() + " would be "
                            + entry.type());
                });
            }
            Map<String, GgufValue> metadata = switch (source) {
                case GgufSource gguf -> QuantizationMetadata.fromGguf(gguf.file(), preset);
                case HuggingFaceSource directory ->
                        QuantizationMetadata.fromHuggingFace(directory.path(), config, preset);
            };
            if (source instanceof HuggingFaceSource && source.pooling() == Pooling.LAST) {
                QuantizationMetadata.recordLastTokenPooling(metadata, config,
                        source.appendedToken(source.tokenizer()));
            }
            if (importance != null) QuantizationMetadata.recordImportance(metadata, imatrix, importance);
            QuantizationRun run = QuantizationRun.prepareParts(plan, tensors, RowQuantizers::of, importance);
            long sourceBytes = tensors.values().stream().flatMap(List::stream).mapToLong(t -> t.data().byteSize()).sum();
            long weights = tensors.values().stream().flatMap(List::stream).mapToLong(Tensor::elementCount).sum();
            err.printf(Locale.ROOT, "fs: quantizing %s to %s as %s: %d tensors, %s -> %s (%.2f bits per weight), "
                    + "%d threads%n", path, output, preset, plan.tensors().size(), HumanSize.of(sourceBytes),
                    HumanSize.of(plan.bytes()), 8.0 * plan.bytes() / weights, threads);
            err.flush();
            run.write(output, metadata, threads,
                    new QuantizationProgress(err, Terminal.stderrIsTerminal(), plan));
        }
        return 0;
    }

    /** The output may not be the model itself (mapped while it is read), a directory, or in a missing one. */
    private void checkOutput(Path model) {
        if (Files.isDirectory(output)) {
            throw new FsException("-o " + output + ": is a directory, expected a .gguf file");
        }
        Path directory = output.toAbsolutePath().getParent();
        if (!Files.isDirectory(directory)) throw new FsException("-o " + output + ": no directory " + directory);
        try {
            if (Files.exists(output) && Files.isSameFile(output, model)) {
                throw new FsException("-o " + output + " is the model being quantized; write to another file");
            }
        } catch (IOException e) {
            throw FsException.cannotRead(output, e);
        }
    }

    /**
     * What llama.cpp's qwen3moe cannot hold, refused before anything is written: it has no dense feed-forward layers
     * (Hugging Face's mlp_only_layers, decoder_sparse_step) and always renormalizes the chosen experts' weights.
     */
    private static void checkWritable(ModelConfig config) {
        List<FeedForward> blocks = config.feedForward();
        if (blocks.stream().noneMatch(f -> f instanceof FeedForward.Experts)) return;
        List<Integer> dense = new ArrayList<>();
        for (int l = 0; l < blocks.size(); l++) if (blocks.get(l) instanceof FeedForward.Dense) dense.add(l);
        if (!dense.isEmpty()) {
            throw new FsException("cannot write this mixture of experts as llama.cpp's "
                    + config.architecture().ggufName() + ": layer" + (dense.size() == 1 ? " " : "s ")
                    + dense.stream().map(String::valueOf).collect(Collectors.joining(", ")) + (dense.size() == 1
                    ? " has" : " have") + " a dense feed-forward (mlp_only_layers / decoder_sparse_step), which "
                    + config.architecture().ggufName() + " has no place for");
        }
        boolean normalized = blocks.stream()
                .allMatch(f -> !(f instanceof FeedForward.Experts e) || e.normalizeTopK());
        if (!normalized) {
            throw new FsException("cannot write this mixture of experts as llama.cpp's "
                    + config.architecture().ggufName() + ": norm_topk_prob is false, and "
                    + config.architecture().ggufName() + " always renormalizes the chosen experts' weights");
        }
    }

    /**
     * The model's tensors by their GGUF names (llama.cpp's), whichever source they come from, each as the tensors
     * its rows are read from in turn: itself, or for an expert stack of a Hugging Face checkpoint each expert's
     * matrix, stacked as convert_hf_to_gguf.py stacks them (expert-major, [experts, out, in]).
     */
    private static Map<String, List<Tensor>> ggufTensors(ModelConfig config, ModelWeights weights) {
        TensorNaming names = TensorNaming.GGUF;
        Map<String, List<Tensor>> tensors = new LinkedHashMap<>();
        put(tensors, names.embedding(), weights.embedTokens());
        for (int l = 0; l < weights.layers().size(); l++) {
            ModelWeights.Layer layer = weights.layers().get(l);
            ModelWeights.Attention a = layer.attention();
            put(tensors, names.layer(l, TensorRole.ATTN_NORM), a.norm());
            put(tensors, names.layer(l, TensorRole.Q), a.q());
            put(tensors, names.layer(l, TensorRole.K), a.k());
            put(tensors, names.layer(l, TensorRole.V), a.v());
            put(tensors, names.layer(l, TensorRole.O), a.o());
            put(tensors, names.layer(l, TensorRole.Q_NORM), a.qNorm());
            put(tensors, names.layer(l, TensorRole.K_NORM), a.kNorm());
            put(tensors, names.layer(l, TensorRole.FFN_NORM), layer.ffnNorm());
            switch (layer.feedForward()) {
                case ModelWeights.Dense d -> {
                    put(tensors, names.layer(l, TensorRole.GATE), d.gate());
                    put(tensors, names.layer(l, TensorRole.UP), d.up());
                    put(tensors, names.layer(l, TensorRole.DOWN), d.down());
                }
                case ModelWeights.Experts e -> {
                    put(tensors, names.layer(l, TensorRole.ROUTER), e.router());
                    stack(tensors, names.layer(l, TensorRole.EXPERT_GATE), e.gate());
                    stack(tensors, names.layer(l, TensorRole.EXPERT_UP), e.up());
                    stack(tensors, names.layer(l, TensorRole.EXPERT_DOWN), e.down());
                }
            }
        }
        put(tensors, names.norm(), weights.norm());
        // tied: the embedding is the output projection, and llama.cpp, like fs, takes it when output.weight is absent
        if (weights.lmHead() != null && !config.tieWordEmbeddings()) put(tensors, names.output(), weights.lmHead());
        return tensors;
    }

    /** The experts' matrices as GGUF's one [experts, out, in] stack: the GGUF file's own, or each expert's in turn. */
    private static void stack(Map<String, List<Tensor>> tensors, String name, ModelWeights.ExpertMatrices matrices) {
        if (matrices.stack() != null) {
            put(tensors, name, matrices.stack());
            return;
        }
        tensors.put(name, List.copyOf(matrices.experts()));
    }

    /** The stack the parts make, for the plan (its name, type and shape; its rows are read from the parts). */
    private static Tensor stacked(String name, List<Tensor> parts) {
        long[] matrix = parts.getFirst().shape();
        return new Tensor(name, parts.getFirst().dtype(), new long[] {parts.size(), matrix[0], matrix[1]},
                MemorySegment.NULL);
    }

    private static void put(Map<String, List<Tensor>> tensors, String name, Tensor tensor) {
        tensors.put(name, List.of(new Tensor(name, tensor.dtype(), tensor.shape(), tensor.data())));
    }
}
