package fs.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.hub.ModelResolver;
import fs.model.Qwen3Config;
import fs.model.Qwen3Weights;
import fs.model.WeightCheck;
import fs.safetensors.Checkpoint;
import fs.safetensors.SafetensorsFile;
import fs.tensor.Tensor;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Shows a checkpoint's config and tensors; exits 1 when the weights do not match the config.")
final class InspectCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODEL", description = "A model directory (config.json and *.safetensors) or a Hugging Face repo id.")
    String model;

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    @Override
    public Integer call() throws JsonProcessingException {
        Path directory = modelDirectory(model, spec.commandLine().getErr());
        Qwen3Config config = Qwen3Config.read(directory.resolve("config.json"));
        try (Checkpoint checkpoint = Checkpoint.open(directory)) {
            List<Row> rows = rows(checkpoint);
            WeightCheck check = Qwen3Weights.check(config, checkpoint);
            PrintWriter err = spec.commandLine().getErr();
            for (String note : check.notes()) err.println("fs: " + directory + ": " + note);
            err.flush();
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                // Made here, not in a static field: picocli instantiates every command on every start, and Jackson's
                // databind takes a third of a second to set up on a cold JVM.
                out.println(new ObjectMapper().writerWithDefaultPrettyPrinter()
                        .writeValueAsString(toJson(directory, config, rows, check)));
            } else {
                printText(out, directory, config, rows, check);
            }
            out.flush();
            // The report is printed either way; the exit status tells a script whether fs could run this model.
            return check.ok() ? 0 : 1;
        }
    }

    /** Where MODEL's files are: a local directory, or a Hugging Face repo id through the cache or the hub. */
    static Path modelDirectory(String model, PrintWriter log) {
        return ModelResolver.resolve(model, log);
    }

    /** One tensor as listed: {@code file} relative to the model directory. */
    private record Row(Tensor tensor, String file) {
        long bytes() {
            return tensor.data().byteSize();
        }
    }

    private static List<Row> rows(Checkpoint checkpoint) {
        List<Row> rows = new ArrayList<>();
        for (SafetensorsFile file : checkpoint.files()) {
            String name = checkpoint.directory().relativize(file.path()).toString();
            for (Tensor tensor : file.tensors()) rows.add(new Row(tensor, name));
        }
        return rows;
    }

    private static long parameterCount(List<Row> rows) {
        return rows.stream().mapToLong(row -> row.tensor().elementCount()).sum();
    }

    private static long byteCount(List<Row> rows) {
        return rows.stream().mapToLong(Row::bytes).sum();
    }

    private static void printText(
            PrintWriter out, Path directory, Qwen3Config config, List<Row> rows, WeightCheck check) {
        String[][] summary = {
            {"model", directory.toString()},
            {"architecture", "Qwen3ForCausalLM (qwen3)"},
            {"layers", String.valueOf(config.numHiddenLayers())},
            {"hidden", String.valueOf(config.hiddenSize())},
            {"heads", config.numAttentionHeads() + " query / " + config.numKeyValueHeads() + " kv"},
            {"head_dim", String.valueOf(config.headDim())},
            {"intermediate", String.valueOf(config.intermediateSize())},
            {"vocab", String.valueOf(config.vocabSize())},
            {"rope theta", plain(config.ropeTheta())},
            {"rms eps", plain(config.rmsNormEps())},
            {"max positions", String.valueOf(config.maxPositionEmbeddings())},
            {"tied", config.tieWordEmbeddings() ? "yes" : "no"},
            {"dtype", config.torchDtype()},
            {"bos / eos", config.bosTokenId() + " / " + config.eosTokenIds()},
        };
        for (String[] line : summary) out.printf("%-14s %s%n", line[0], line[1]);
        out.println();

        List<String[]> table = new ArrayList<>();
        table.add(new String[] {"NAME", "DTYPE", "SHAPE", "BYTES", "FILE"});
        for (Row row : rows) {
            Tensor tensor = row.tensor();
            table.add(new String[] {
                tensor.name(), tensor.dtype().name(), Arrays.toString(tensor.shape()), String.valueOf(row.bytes()), row.file()
            });
        }
        int[] widths = new int[5];
        for (String[] cells : table) {
            for (int i = 0; i < cells.length; i++) widths[i] = Math.max(widths[i], cells[i].length());
        }
        String format = "%-" + widths[0] + "s  %-" + widths[1] + "s  %-" + widths[2] + "s  %" + widths[3] + "s  %s%n";
        for (String[] cells : table) out.printf(format, (Object[]) cells);
        out.println();

        long parameters = parameterCount(rows);
        long bytes = byteCount(rows);
        out.printf(Locale.ROOT, "%-14s %d tensors in %d file(s), %,d parameters (%.1f M), %,d bytes (%.2f GiB)%n",
                "total", rows.size(), rows.stream().map(Row::file).distinct().count(), parameters, parameters / 1e6,
                bytes, bytes / (double) (1L << 30));
        out.printf("%-14s %s%n", "weights", check.ok()
                ? "ok (every tensor the model reads is present with the expected shape and dtype)"
                : check.problemCount() + " problem(s): " + check.problemLine());
    }

    private static ObjectNode toJson(Path directory, Qwen3Config config, List<Row> rows, WeightCheck check) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("model", directory.toString());

        ObjectNode configNode = root.putObject("config");
        configNode.put("architecture", "Qwen3ForCausalLM");
        configNode.put("model_type", "qwen3");
        configNode.put("num_hidden_layers", config.numHiddenLayers());
        configNode.put("hidden_size", config.hiddenSize());
        configNode.put("num_attention_heads", config.numAttentionHeads());
        configNode.put("num_key_value_heads", config.numKeyValueHeads());
        configNode.put("head_dim", config.headDim());
        configNode.put("intermediate_size", config.intermediateSize());
        configNode.put("vocab_size", config.vocabSize());
        configNode.put("rope_theta", config.ropeTheta());
        configNode.put("rms_norm_eps", config.rmsNormEps());
        configNode.put("max_position_embeddings", config.maxPositionEmbeddings());
        configNode.put("tie_word_embeddings", config.tieWordEmbeddings());
        configNode.put("torch_dtype", config.torchDtype());
        configNode.put("bos_token_id", config.bosTokenId());
        ArrayNode eos = configNode.putArray("eos_token_id");
        config.eosTokenIds().forEach(eos::add);

        ArrayNode tensors = root.putArray("tensors");
        for (Row row : rows) {
            ObjectNode tensor = tensors.addObject();
            tensor.put("name", row.tensor().name());
            tensor.put("dtype", row.tensor().dtype().name());
            ArrayNode shape = tensor.putArray("shape");
            for (long dim : row.tensor().shape()) shape.add(dim);
            tensor.put("bytes", row.bytes());
            tensor.put("file", row.file());
        }

        ObjectNode totals = root.putObject("totals");
        totals.put("tensors", rows.size());
        totals.put("parameters", parameterCount(rows));
        totals.put("bytes", byteCount(rows));

        ObjectNode weights = root.putObject("weights");
        weights.put("ok", check.ok());
        weights.put("problem_count", check.problemCount());
        ArrayNode problemsNode = weights.putArray("problems");
        check.problems().forEach(problemsNode::add);
        ArrayNode notesNode = weights.putArray("notes");
        check.notes().forEach(notesNode::add);
        return root;
    }

    /** 1000000 and 0.000001 rather than 1000000.0 and 1.0E-6. */
    private static String plain(float value) {
        return new BigDecimal(Float.toString(value)).stripTrailingZeros().toPlainString();
    }
}
