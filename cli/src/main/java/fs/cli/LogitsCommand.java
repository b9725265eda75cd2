package fs.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.engine.LoadedModel;
import fs.model.Probe;
import fs.model.SingleSequence;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(name = "logits", mixinStandardHelpOptions = true,
        description = "Prints, as one JSON object, the top logits at every position of a token sequence.")
final class LogitsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = "--tokens", paramLabel = "IDS", converter = TokenIds.Converter.class,
            description = "The input token ids, e.g. \"1 2 3\" (as fs tokenize prints them) or 1,2,3 (one of "
                    + "--tokens or -p is required).")
    TokenIds tokens;

    @Option(names = {"-p", "--prompt"}, paramLabel = "TEXT",
            description = "The input as text, tokenized as fs tokenize does: no chat template (one of --tokens or -p "
                    + "is required).")
    String text;

    /** Tokens per forward: each keeps its row of logits (600 KB for Qwen3's vocabulary). */
    private static final int LOGITS_BATCH = 128;

    private int top = 5;

    @Option(names = "--top", paramLabel = "K", description = "Logits per position (default: 5).")
    void top(int k) {
        if (k < 1) throw new ParameterException(spec.commandLine(), "--top must be at least 1, got " + k);
        top = k;
    }

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        if (tokens == null && text == null) {
            throw new ParameterException(spec.commandLine(), "no input: give --tokens IDS or -p TEXT");
        }
        if (tokens != null && text != null) {
            throw new ParameterException(spec.commandLine(), "--tokens and -p are exclusive: give the input one way");
        }
        if (text != null && text.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "-p is empty: there is nothing to score");
        }
        ObjectMapper json = new ObjectMapper();
        ObjectNode result = json.createObjectNode();
        try (LoadedModel<SingleSequence> loaded = modelOptions.load(
                context -> SingleSequence.Shape.forEveryPosition(context, LOGITS_BATCH), err)) {
            int[] input = tokens != null ? tokens.ids() : loaded.source().tokenizer().encode(text);
            SingleSequence model = loaded.state();
            TokenIds.checkInVocabulary(loaded.config(), input, "--tokens");
            model.checkFits(0, input.length);
            int k = Math.min(top, model.config().vocabSize());

            ArrayNode ids = result.putArray("tokens");
            for (int id : input) ids.add(id);
            ArrayNode positions = result.putArray("positions");
            float[] logits = new float[model.config().vocabSize()];
            model.forwardInBatches(input, 0, Probe.NONE, (firstPosition, rows) -> {
                for (int row = 0; row < rows; row++) {
                    model.readLogits(row, logits);
                    ObjectNode position = positions.addObject();
                    ArrayNode topIds = position.putArray("top_ids");
                    ArrayNode topLogits = position.putArray("top_logits");
                    for (int id : largest(logits, k)) {
                        topIds.add(id);
                        topLogits.add(logits[id]);
                    }
                }
            });
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println(result.toString());
        out.flush();
        return 0;
    }

    /** Indices of the k largest values, largest first (the lower index first on ties). */
    static int[] largest(float[] values, int k) {
        int[] best = new int[k];
        int count = 0;
        for (int i = 0; i < values.length; i++) {
            if (count == k && !(values[i] > values[best[k - 1]])) continue;
            int at = count < k ? count++ : k - 1;
            while (at > 0 && values[i] > values[best[at - 1]]) {
                best[at] = best[at - 1];
                at--;
            }
            best[at] = i;
        }
        return best;
    }
}
