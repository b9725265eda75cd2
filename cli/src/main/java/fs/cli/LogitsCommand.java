package fs.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.model.Probe;
import fs.model.SingleSequence;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "logits", mixinStandardHelpOptions = true,
        description = "Prints, as one JSON object, the top logits at every position of a token sequence.")
final class LogitsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = "--tokens", paramLabel = "IDS", split = ",", required = true,
            description = "The input token ids, e.g. 1,2,3 (required).")
    int[] tokens;

    /** Tokens per forward: each keeps its row of logits (600 KB for Qwen3's vocabulary). */
    private static final int LOGITS_BATCH = 128;

    @Option(names = "--top", paramLabel = "K", defaultValue = "5", description = "Logits per position (default: 5).")
    int top;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        if (top < 1) throw new FsException("--top must be at least 1, got " + top);
        ObjectMapper json = new ObjectMapper();
        ObjectNode result = json.createObjectNode();
        try (LoadedModel loaded = modelOptions.load(
                context -> SingleSequence.Shape.forEveryPosition(context, LOGITS_BATCH), err)) {
            SingleSequence model = loaded.sequence();
            loaded.checkTokenIds(tokens, "--tokens");
            model.checkFits(0, tokens.length);
            int k = Math.min(top, model.config().vocabSize());

            ArrayNode ids = result.putArray("tokens");
            for (int id : tokens) ids.add(id);
            ArrayNode positions = result.putArray("positions");
            float[] logits = new float[model.config().vocabSize()];
            model.forwardInBatches(tokens, 0, Probe.NONE, (firstPosition, rows) -> {
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
