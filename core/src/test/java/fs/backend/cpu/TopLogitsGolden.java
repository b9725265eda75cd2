package fs.backend.cpu;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.backend.Backend;
import fs.model.DecoderModel;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.Probe;
import fs.model.SingleSequence;
import fs.source.ModelSource;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A golden-T.json or llama-T.json (models/q-tied's layout: the 48 tokens, each position's top-5 ids and logits, the
 * greedy tokens) as the native tests compare with it: how far a run's logits at the golden's top ids are from it, and
 * a GGUF file's logits at those ids through a backend.
 */
record TopLogitsGolden(int[] tokens, List<Map<Integer, Double>> positions, int[] greedy) {
    static TopLogitsGolden load(Path file) throws IOException {
        JsonNode root = new ObjectMapper().readTree(file.toFile());
        List<Map<Integer, Double>> positions = new ArrayList<>();
        for (JsonNode position : root.get("positions")) {
            Map<Integer, Double> top = new HashMap<>();
            for (int i = 0; i < position.get("top_ids").size(); i++) {
                top.put(position.get("top_ids").get(i).intValue(), position.get("top_logits").get(i).doubleValue());
            }
            positions.add(top);
        }
        return new TopLogitsGolden(ints(root.get("tokens")), positions, ints(root.get("greedy")));
    }

    private static int[] ints(JsonNode array) {
        return array.valueStream().mapToInt(JsonNode::intValue).toArray();
    }

    /** The largest and the RMS |logit − golden| over the golden's top ids {@code logits} (and {@code only}) has. */
    double[] distance(List<Map<Integer, Double>> logits, List<Map<Integer, Double>> only) {
        double worst = 0, squares = 0;
        int count = 0;
        for (int p = 0; p < positions.size(); p++) {
            for (Map.Entry<Integer, Double> e : positions.get(p).entrySet()) {
                Double logit = logits.get(p).get(e.getKey());
                if (logit == null || only != null && !only.get(p).containsKey(e.getKey())) continue;
                double d = Math.abs(logit - e.getValue());
                worst = Math.max(worst, d);
                squares += d * d;
                count++;
            }
        }
        return new double[] {worst, Math.sqrt(squares / Math.max(count, 1))};
    }

    /** Positions whose top-1 id differs from the golden's. */
    int top1Differences(List<Map<Integer, Double>> logits) {
        int n = 0;
        for (int p = 0; p < positions.size(); p++) {
            if (!argmax(logits.get(p)).equals(argmax(positions.get(p)))) n++;
        }
        return n;
    }

    private static Integer argmax(Map<Integer, Double> top) {
        return top.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    }

    /** Per position, the logits of {@code gguf} at this golden's top ids, through {@code backend} (closed after). */
    List<Map<Integer, Double>> logits(Path gguf, Backend backend) {
        try (ModelSource source = ModelSource.open(gguf); backend) {
            ModelConfig config = source.config();
            SingleSequence model = new SingleSequence(
                    new DecoderModel(config, ModelWeights.bind(config, source.tensors()), backend),
                    new SingleSequence.Shape(64, 16, 16));
            float[] row = new float[config.vocabSize()];
            List<Map<Integer, Double>> out = new ArrayList<>();
            model.forwardInBatches(tokens, 0, Probe.NONE, (first, rows) -> {
                for (int r = 0; r < rows; r++) {
                    model.readLogits(r, row);
                    Map<Integer, Double> at = new HashMap<>();
                    for (int id : positions.get(first + r).keySet()) at.put(id, (double) row[id]);
                    out.add(at);
                }
            });
            return out;
        }
    }
}
