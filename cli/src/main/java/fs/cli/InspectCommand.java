package fs.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.HumanSize;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.hub.ModelResolver;
import fs.hub.RemoteHeaders;
import fs.model.Architecture;
import fs.model.FeedForward;
import fs.model.ModelConfig;
import fs.model.ModelTensors;
import fs.model.ModelWeights;
import fs.model.ParameterCount;
import fs.model.TensorNaming;
import fs.model.WeightCheck;
import fs.quantize.ImportanceMatrix;
import fs.safetensors.Checkpoint;
import fs.safetensors.SafetensorsFile;
import fs.source.GgufSource;
import fs.source.HuggingFaceSource;
import fs.source.ModelSource;
import fs.tensor.Tensor;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Shows a model's config and tensors (and a GGUF file's metadata); exits 1 when the weights do not "
                + "match the config.")
final class InspectCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODEL", description = "A model directory (config.json and *.safetensors), "
            + "a .gguf file, a Hugging Face repo id or repo:QUANT.")
    String model;

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    @Override
    public Integer call() throws JsonProcessingException {
        PrintWriter err = spec.commandLine().getErr();
        Optional<RemoteHeaders> remote = ModelResolver.remoteHeaders(model, err);
        if (remote.isPresent()) return inspectRemote(remote.get());
        Path path = ModelResolver.resolve(model, err);
        if (!Files.isDirectory(path)) {
            try (GgufFile file = GgufFile.open(path)) {
                if (ImportanceMatrix.describes(file)) return inspectImportanceMatrix(path, file);
            }
        }
        try (ModelSource source = ModelSource.open(path)) {
            ModelConfig config = source.config();
            WeightCheck check = ModelWeights.check(config, source.tensors());
            Listing listing = switch (source) {
                case HuggingFaceSource directory -> safetensorsListing(directory.checkpoint());
                case GgufSource gguf -> ggufListing(gguf.file());
            };
            return report(new Subject(path.toString(), null), config, listing, check, check.notes());
        }
    }

    /** An importance matrix is no model: its own summary, exit 0 once every entry reads. */
    private int inspectImportanceMatrix(Path path, GgufFile file) throws JsonProcessingException {
        ImportanceMatrix matrix = ImportanceMatrix.read(path);
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(new ObjectMapper().writerWithDefaultPrettyPrinter()
                    .writeValueAsString(ImportanceMatrixReport.json(path.toString(), file, matrix)));
        } else {
            ImportanceMatrixReport.printText(out, path.toString(), file, matrix);
        }
        out.flush();
        return 0;
    }

    /** A repo not completely in the cache: its config and the headers of its weights, read without the weights. */
    private int inspectRemote(RemoteHeaders remote) throws JsonProcessingException {
        ModelConfig config = ModelConfig.read(remote.snapshot().resolve("config.json"));
        ModelTensors tensors = new ModelTensors(remote.snapshot(), TensorNaming.HUGGING_FACE, remote.tensors());
        WeightCheck check = ModelWeights.check(config, tensors);
        List<String> notes = new ArrayList<>(check.notes());
        String output = tensors.names().output();
        if (config.tieWordEmbeddings() && tensors.find(output).isPresent()) {
            // The check compares a stored output projection with the embedding byte by byte; without the bytes it
            // cannot, so say so rather than let its silence read as "they are equal".
            notes.add("the stored " + output + " is not used (tie_word_embeddings is true); whether it equals "
                    + tensors.names().embedding() + " is unknown: only the headers were read");
        }
        PrintWriter err = spec.commandLine().getErr();
        err.printf(Locale.ROOT, "fs: %s is not completely in the Hugging Face cache: read only config.json and the "
                        + "safetensors headers (%,d of %,d bytes of weights) from the hub, not the weights%n",
                remote.repo(), remote.bytesRead(), remote.totalSize());
        return report(new Subject(remote.repo().toString(), remote.commit()), config, remoteListing(remote), check,
                notes);
    }

    /** Prints the notes on stderr and the report on stdout; the exit status. */
    private int report(Subject subject, ModelConfig config, Listing listing, WeightCheck check, List<String> notes)
            throws JsonProcessingException {
        PrintWriter err = spec.commandLine().getErr();
        for (String note : notes) err.println("fs: " + subject.model() + ": " + note);
        err.flush();
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            // Made here, not in a static field: picocli instantiates every command on every start, and Jackson's
            // databind takes a third of a second to set up on a cold JVM.
            out.println(new ObjectMapper().writerWithDefaultPrettyPrinter()
                    .writeValueAsString(toJson(subject, config, listing, check, notes)));
        } else {
            printText(out, subject, config, listing, check);
        }
        out.flush();
        // The report is printed either way; the exit status tells a script whether fs could run this model.
        return check.ok() ? 0 : 1;
    }

    /**
     * What is inspected: a local directory or file, or a repo id with the {@code commit} whose headers were read over
     * HTTP (null when local).
     */
    private record Subject(String model, String commit) {}

    /**
     * One stored tensor as listed: {@code type} is the safetensors dtype or the ggml type; {@code file} (safetensors)
     * is relative to the model directory, null for a GGUF file, whose listing shows bits per weight instead.
     */
    private record Row(String name, String type, long[] shape, long elements, long bytes, String file) {
        double bitsPerWeight() {
            return 8.0 * bytes / elements;
        }
    }

    /** What differs between the formats: the tensors, and for GGUF its header and metadata. */
    private record Listing(List<Row> rows, GgufFile gguf) {
        long parameters() {
            return rows.stream().mapToLong(Row::elements).sum();
        }

        long bytes() {
            return rows.stream().mapToLong(Row::bytes).sum();
        }
    }

    private static Listing safetensorsListing(Checkpoint checkpoint) {
        List<Row> rows = new ArrayList<>();
        for (SafetensorsFile file : checkpoint.files()) {
            String name = checkpoint.directory().relativize(file.path()).toString();
            for (Tensor tensor : file.tensors()) {
                rows.add(new Row(tensor.name(), tensor.dtype().name(), tensor.shape(), tensor.elementCount(),
                        tensor.data().byteSize(), name));
            }
        }
        return new Listing(rows, null);
    }

    private static Listing remoteListing(RemoteHeaders remote) {
        List<Row> rows = new ArrayList<>();
        for (RemoteHeaders.WeightsFile file : remote.files()) {
            for (Tensor tensor : file.tensors()) {
                // byteSize() from the shape: the header check made it equal to the tensor's span in the file.
                rows.add(new Row(tensor.name(), tensor.dtype().name(), tensor.shape(), tensor.elementCount(),
                        tensor.byteSize(), file.name()));
            }
        }
        return new Listing(rows, null);
    }

    private static Listing ggufListing(GgufFile file) {
        List<Row> rows = new ArrayList<>();
        for (GgufTensor tensor : file.tensors()) {
            long elements = tensor.rows() * tensor.columns();
            rows.add(new Row(tensor.name(), tensor.type().name(), tensor.shape(), elements, tensor.data().byteSize(),
                    null));
        }
        return new Listing(rows, file);
    }

    private static void printText(PrintWriter out, Subject subject, ModelConfig config, Listing listing,
            WeightCheck check) {
        GgufFile gguf = listing.gguf();
        List<String[]> summary = new ArrayList<>();
        summary.add(new String[] {"model", subject.model()
                + (subject.commit() != null ? " at commit " + subject.commit() + " (headers only)" : "")});
        if (gguf != null) {
            summary.add(new String[] {"format", "GGUF v" + gguf.version() + ", alignment " + gguf.alignment() + ", "
                    + gguf.metadata().values().size() + " metadata keys"});
        }
        Architecture architecture = config.architecture();
        summary.add(new String[] {"architecture", gguf != null ? architecture.ggufName()
                : architecture.huggingFaceClass() + " (" + architecture.modelType() + ")"});
        summary.addAll(List.of(
                new String[] {"layers", String.valueOf(config.numHiddenLayers())},
                new String[] {"hidden", String.valueOf(config.hiddenSize())},
                new String[] {"heads", config.numAttentionHeads() + " query / " + config.numKeyValueHeads() + " kv"},
                new String[] {"head_dim", String.valueOf(config.headDim())},
                new String[] {"intermediate", String.valueOf(config.largestFeedForwardWidth())}));
        experts(config).ifPresent(experts -> summary.add(new String[] {"experts", experts.count() + " per layer, "
                + experts.used() + " used per token, each of width " + experts.width()
                + (experts.normalizeTopK() ? "" : " (chosen weights not renormalized)")}));
        List<Integer> dense = denseLayers(config);
        if (!dense.isEmpty()) summary.add(new String[] {"dense layers", dense + " (a dense feed-forward of width "
                + denseWidth(config) + ")"});
        ParameterCount counted = ParameterCount.of(config);
        if (counted.sparse()) {
            summary.add(new String[] {"parameters", String.format(Locale.ROOT, "%,d (%s), %,d (%s) active per token",
                    counted.total(), ParameterCount.label(counted.total()), counted.active(),
                    ParameterCount.label(counted.active()))});
        }
        summary.addAll(List.of(
                new String[] {"vocab", String.valueOf(config.vocabSize())},
                new String[] {"rope theta", plain(config.ropeTheta())},
                new String[] {"rms eps", plain(config.rmsNormEps())},
                new String[] {"max positions", String.valueOf(config.maxPositionEmbeddings())},
                new String[] {"tied", config.tieWordEmbeddings() ? "yes" : "no"}));
        summary.add(gguf == null ? new String[] {"dtype", config.torchDtype()}
                : new String[] {"file type", ModelDescription.fileType(gguf)});
        summary.add(new String[] {"bos / eos", config.bosTokenId() + " / " + config.eosTokenIds()});
        for (String[] line : summary) out.printf("%-14s %s%n", line[0], line[1]);
        out.println();

        if (gguf != null) {
            GgufMetadataSummary.lines(gguf.metadata().values()).forEach(out::println);
            out.println();
        }

        List<String[]> table = new ArrayList<>();
        table.add(new String[] {"NAME", gguf != null ? "TYPE" : "DTYPE", "SHAPE", "BYTES",
                gguf != null ? "BITS/WEIGHT" : "FILE"});
        for (Row row : listing.rows()) {
            table.add(new String[] {row.name(), row.type(), Arrays.toString(row.shape()), String.valueOf(row.bytes()),
                    gguf != null ? String.format(Locale.ROOT, "%.2f", row.bitsPerWeight()) : row.file()});
        }
        int[] widths = new int[5];
        for (String[] cells : table) {
            for (int i = 0; i < cells.length; i++) widths[i] = Math.max(widths[i], cells[i].length());
        }
        String format = "%-" + widths[0] + "s  %-" + widths[1] + "s  %-" + widths[2] + "s  %" + widths[3] + "s  "
                + (gguf != null ? "%" + widths[4] + "s" : "%s") + "%n";
        for (String[] cells : table) out.printf(format, (Object[]) cells);
        out.println();

        long parameters = listing.parameters();
        long bytes = listing.bytes();
        String where = gguf != null ? ""
                : " in " + listing.rows().stream().map(Row::file).distinct().count() + " file(s)";
        out.printf(Locale.ROOT, "%-14s %d tensors%s, %,d parameters (%.1f M), %,d bytes (%s)%s%n", "total",
                listing.rows().size(), where, parameters, parameters / 1e6, bytes, HumanSize.of(bytes),
                gguf != null ? String.format(Locale.ROOT, ", %.2f bits per weight", 8.0 * bytes / parameters) : "");
        out.printf("%-14s %s%n", "weights", check.ok()
                ? "ok (every tensor the model reads is present with the expected shape and dtype)"
                : check.problemCount() + " problem(s): " + check.problemLine());
    }

    /** The model's mixture of experts (every sparse layer has the same), if it has one. */
    private static Optional<FeedForward.Experts> experts(ModelConfig config) {
        return config.feedForward().stream().filter(f -> f instanceof FeedForward.Experts)
                .map(f -> (FeedForward.Experts) f).findFirst();
    }

    /** The layers with a dense feed-forward in a mixture of experts (Hugging Face's mlp_only_layers); none in a dense model. */
    private static List<Integer> denseLayers(ModelConfig config) {
        if (experts(config).isEmpty()) return List.of();
        List<Integer> dense = new ArrayList<>();
        for (int l = 0; l < config.numHiddenLayers(); l++) {
            if (config.feedForward(l) instanceof FeedForward.Dense) dense.add(l);
        }
        return dense;
    }

    private static int denseWidth(ModelConfig config) {
        return config.feedForward().stream().filter(f -> f instanceof FeedForward.Dense)
                .mapToInt(FeedForward::width).max().orElse(0);
    }

    private static ObjectNode toJson(Subject subject, ModelConfig config, Listing listing, WeightCheck check,
            List<String> notes) {
        GgufFile gguf = listing.gguf();
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("model", subject.model());
        if (subject.commit() != null) {
            root.put("commit", subject.commit());
            root.put("headers_only", true);
        }
        root.put("format", gguf != null ? "gguf" : "safetensors");

        ObjectNode configNode = root.putObject("config");
        configNode.put("architecture", config.architecture().huggingFaceClass());
        configNode.put("model_type", config.architecture().modelType());
        configNode.put("num_hidden_layers", config.numHiddenLayers());
        configNode.put("hidden_size", config.hiddenSize());
        configNode.put("num_attention_heads", config.numAttentionHeads());
        configNode.put("num_key_value_heads", config.numKeyValueHeads());
        configNode.put("head_dim", config.headDim());
        configNode.put("intermediate_size", config.largestFeedForwardWidth());
        configNode.put("vocab_size", config.vocabSize());
        configNode.put("rope_theta", config.ropeTheta());
        configNode.put("rms_norm_eps", config.rmsNormEps());
        configNode.put("max_position_embeddings", config.maxPositionEmbeddings());
        configNode.put("tie_word_embeddings", config.tieWordEmbeddings());
        configNode.put("torch_dtype", config.torchDtype());
        configNode.put("bos_token_id", config.bosTokenId());
        ArrayNode eos = configNode.putArray("eos_token_id");
        config.eosTokenIds().forEach(eos::add);
        experts(config).ifPresent(experts -> {
            // config.json's names for the mixture of experts
            configNode.put("num_experts", experts.count());
            configNode.put("num_experts_per_tok", experts.used());
            configNode.put("moe_intermediate_size", experts.width());
            configNode.put("norm_topk_prob", experts.normalizeTopK());
            ArrayNode dense = configNode.putArray("dense_layers"); // mlp_only_layers and decoder_sparse_step's
            denseLayers(config).forEach(dense::add);
        });
        ParameterCount counted = ParameterCount.of(config);
        ObjectNode parameters = root.putObject("parameters");
        parameters.put("total", counted.total());
        parameters.put("active_per_token", counted.active());

        if (gguf != null) {
            ObjectNode header = root.putObject("gguf");
            header.put("version", gguf.version());
            header.put("alignment", gguf.alignment());
            header.set("metadata", GgufMetadataSummary.json(gguf.metadata().values()));
        }

        ArrayNode tensors = root.putArray("tensors");
        for (Row row : listing.rows()) {
            ObjectNode tensor = tensors.addObject();
            tensor.put("name", row.name());
            tensor.put(gguf != null ? "type" : "dtype", row.type());
            ArrayNode shape = tensor.putArray("shape");
            for (long dim : row.shape()) shape.add(dim);
            tensor.put("bytes", row.bytes());
            if (gguf != null) {
                tensor.put("bits_per_weight", row.bitsPerWeight());
            } else {
                tensor.put("file", row.file());
            }
        }

        ObjectNode totals = root.putObject("totals");
        totals.put("tensors", listing.rows().size());
        totals.put("parameters", listing.parameters());
        totals.put("bytes", listing.bytes());
        if (gguf != null) totals.put("bits_per_weight", 8.0 * listing.bytes() / listing.parameters());

        ObjectNode weights = root.putObject("weights");
        weights.put("ok", check.ok());
        weights.put("problem_count", check.problemCount());
        ArrayNode problemsNode = weights.putArray("problems");
        check.problems().forEach(problemsNode::add);
        ArrayNode notesNode = weights.putArray("notes");
        notes.forEach(notesNode::add);
        return root;
    }

    /** 1000000 and 0.000001 rather than 1000000.0 and 1.0E-6. */
    private static String plain(float value) {
        return new BigDecimal(Float.toString(value)).stripTrailingZeros().toPlainString();
    }
}
