package fs.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The float64 reference outputs committed with a tiny checkpoint (models/NAME/golden): the logits of every prompt
 * position (top ids and logits, plus the logits of fixed probe ids), the full last-position logits, and a greedy
 * continuation.
 */
public record Golden(
        Path modelDir,
        int[] promptIds,
        List<Position> positions,
        int[] probeIds,
        float[] lastLogits,
        int[] greedyPromptIds,
        int[] greedyGeneratedIds) {

    /** The reference at one prompt position: the top ids (largest first) with their logits, and the probe logits. */
    public record Position(int[] topIds, double[] topLogits, double[] probeLogits) {}

    /**
     * The checkpoints committed under models/ with golden data; tiny-tied-yarn is tiny-tied's weights (linked) with
     * YaRN in its config.json.
     */
    public static final List<String> CHECKPOINTS =
            List.of("tiny-tied", "tiny-untied", "tiny-tied-head-sharded", "tiny-tied-yarn", "tiny-moe");

    public static Path modelDir(String checkpoint) {
        return Path.of(System.getProperty("fs.repo"), "models", checkpoint);
    }

    public static Golden load(String checkpoint) throws IOException {
        Path dir = modelDir(checkpoint);
        JsonNode root = new ObjectMapper().readTree(dir.resolve("golden/golden.json").toFile());
        List<Position> positions = new ArrayList<>();
        JsonNode probeLogits = root.get("probe_logits"); // [position][probe]
        for (int i = 0; i < root.get("positions").size(); i++) {
            JsonNode p = root.get("positions").get(i);
            positions.add(new Position(ints(p.get("top_ids")), doubles(p.get("top_logits")),
                    doubles(probeLogits.get(i))));
        }
        byte[] raw = Files.readAllBytes(dir.resolve("golden/last_logits.f32"));
        float[] last = new float[raw.length / 4];
        ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(last);
        JsonNode greedy = root.get("greedy");
        return new Golden(dir, ints(root.get("prompt_ids")), List.copyOf(positions), ints(root.get("probe_ids")), last,
                ints(greedy.get("prompt_ids")), ints(greedy.get("generated_ids")));
    }

    private static int[] ints(JsonNode array) {
        int[] values = new int[array.size()];
        for (int i = 0; i < values.length; i++) values[i] = array.get(i).intValue();
        return values;
    }

    private static double[] doubles(JsonNode array) {
        double[] values = new double[array.size()];
        for (int i = 0; i < values.length; i++) values[i] = array.get(i).doubleValue();
        return values;
    }
}
