package fs.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.backend.cpu.VectorBackend;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The YaRN golden (models/tiny-tied-yarn, tiny-tied's weights) pins YaRN down: plain RoPE, or YaRN with one of its
 * parts left out, misses it by far more than {@link ModelGoldenTest}'s tolerance, so passing it means computing YaRN.
 */
class YarnGoldenTest {
    /** A miss this many times the golden tolerance cannot be float32 rounding. */
    private static final double FAR = 20 * ModelGoldenTest.REFERENCE_TOLERANCE;

    @TempDir
    Path dir;

    @Test
    void theYarnGoldenIsFarFromPlainRopesOnTheSameWeightsAndPrompt() throws IOException {
        Golden yarn = Golden.load("tiny-tied-yarn");
        Golden plain = Golden.load("tiny-tied");
        assertArrayEquals(plain.promptIds(), yarn.promptIds());
        assertArrayEquals(plain.probeIds(), yarn.probeIds());
        double largest = 0;
        int otherTopIds = 0;
        for (int p = 0; p < yarn.positions().size(); p++) {
            Golden.Position y = yarn.positions().get(p), r = plain.positions().get(p);
            for (int i = 0; i < y.probeLogits().length; i++) {
                largest = Math.max(largest, Math.abs(y.probeLogits()[i] - r.probeLogits()[i]));
            }
            if (y.topIds()[0] != r.topIds()[0]) otherTopIds++;
        }
        assertTrue(largest > FAR, "largest probe logit difference " + largest);
        assertTrue(otherTopIds > 10, otherTopIds + " positions with another top id");
    }

    @Test
    void plainRopeOrYarnWithAPartLeftOutMissesTheGolden() throws IOException {
        Golden golden = Golden.load("tiny-tied-yarn");
        assertMisses(golden, "plain RoPE", scaling -> scaling.removeAll().put("rope_type", "default"));
        assertMisses(golden, "no attention factor", scaling -> scaling.put("attention_factor", 1.0));
        // factor 1 leaves every frequency as plain RoPE's; the attention factor stays factor 4's
        assertMisses(golden, "plain frequencies", scaling -> scaling.put("factor", 1.0)
                .put("attention_factor", 1 + 0.1 * Math.log(4)));
        assertMisses(golden, "no truncation of the ramp", scaling -> scaling.put("truncate", false));
    }

    /**
     * Runs the golden's first 32 prompt tokens with tiny-tied-yarn's rope_scaling edited; some probe logit must miss by
     * more than FAR (the reference's misses there: 2.4 to 8.9, the smallest without truncation).
     */
    private void assertMisses(Golden golden, String variant, Consumer<ObjectNode> edit) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode config = (ObjectNode) mapper.readTree(golden.modelDir().resolve("config.json").toFile());
        edit.accept((ObjectNode) config.get("rope_scaling"));
        Path configJson = Files.writeString(dir.resolve(variant.replace(' ', '-') + ".json"),
                mapper.writeValueAsString(config));
        int[] prompt = Arrays.copyOf(golden.promptIds(), 32);
        double[] largest = {0};
        try (TestModel test = TestModel.open(golden.modelDir(), configJson, new VectorBackend(2), prompt.length,
                prompt.length, prompt.length)) {
            SingleSequence m = test.sequence();
            float[] logits = new float[m.config().vocabSize()];
            m.forwardInBatches(prompt, 0, Probe.NONE, (first, rows) -> {
                for (int row = 0; row < rows; row++) {
                    m.readLogits(row, logits);
                    Golden.Position expected = golden.positions().get(first + row);
                    for (int i = 0; i < golden.probeIds().length; i++) {
                        double miss = Math.abs(expected.probeLogits()[i] - logits[golden.probeIds()[i]]);
                        largest[0] = Math.max(largest[0], miss);
                    }
                }
            });
        }
        assertTrue(largest[0] > FAR, variant + ": largest miss " + largest[0]);
    }
}
