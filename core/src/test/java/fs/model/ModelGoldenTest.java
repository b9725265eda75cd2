package fs.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.Backend;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * The forward pass against the float64 reference of every committed tiny checkpoint. A backend's test extends this
 * class and says how to create the backend.
 */
public abstract class ModelGoldenTest {
    static final List<String> CHECKPOINTS = Golden.CHECKPOINTS;

    /** Logits are compared with the float64 reference to this absolute tolerance. */
    static final double REFERENCE_TOLERANCE = 1e-3;
    /**
     * Batched and one-token forwards on the same backend agree to 1e-4. A backend whose one-row and many-row kernels
     * sum in different orders widens it by overriding, in proportion to the logit (a float's rounding is relative).
     */
    protected double batchingTolerance(ModelConfig config, float logit) {
        return 1e-4;
    }

    /** A fresh backend; the test closes it. */
    protected abstract Backend createBackend();

    @ParameterizedTest
    @FieldSource("CHECKPOINTS")
    void everyPromptPositionMatchesTheReference(String checkpoint) throws IOException {
        Golden golden = Golden.load(checkpoint);
        int n = golden.promptIds().length;
        try (TestModel test = TestModel.open(golden.modelDir(), createBackend(), n, 64, 64)) {
            SingleSequence model = test.sequence();
            float[] logits = new float[model.config().vocabSize()];
            model.forwardInBatches(golden.promptIds(), 0, Probe.NONE, (first, rows) -> {
                for (int row = 0; row < rows; row++) {
                    int position = first + row;
                    model.readLogits(row, logits);
                    Golden.Position expected = golden.positions().get(position);
                    String where = checkpoint + " position " + position;
                    assertArrayEquals(expected.topIds(), topIds(logits, expected.topIds().length), where + ": top ids");
                    for (int i = 0; i < expected.topIds().length; i++) {
                        assertEquals(expected.topLogits()[i], logits[expected.topIds()[i]], REFERENCE_TOLERANCE,
                                where + ": logit of top id " + expected.topIds()[i]);
                    }
                    for (int i = 0; i < golden.probeIds().length; i++) {
                        assertEquals(expected.probeLogits()[i], logits[golden.probeIds()[i]], REFERENCE_TOLERANCE,
                                where + ": logit of probe id " + golden.probeIds()[i]);
                    }
                }
            });
            // After the last batch, its last row is the last prompt position: compare the whole vocabulary.
            model.readLogits(model.logitRows() - 1, logits);
            assertEquals(golden.lastLogits().length, logits.length);
            for (int id = 0; id < logits.length; id++) {
                assertEquals(golden.lastLogits()[id], logits[id], REFERENCE_TOLERANCE, checkpoint + ": last logit " + id);
            }
        }
    }

    @ParameterizedTest
    @FieldSource("CHECKPOINTS")
    void greedyContinuationThroughTheKvCacheMatchesTheReference(String checkpoint) throws IOException {
        Golden golden = Golden.load(checkpoint);
        int[] expected = golden.greedyGeneratedIds();
        try (TestModel test = TestModel.open(golden.modelDir(), createBackend(), 64, 64, 1)) {
            Generator generator = new Generator(test.sequence(), test.sequence().config().eosTokenIds().stream()
                    .mapToInt(Integer::intValue).toArray(), SamplingParams.greedy());
            List<Integer> streamed = new ArrayList<>();
            Generator.Generation generation = generator.generate(golden.greedyPromptIds(), expected.length, streamed::add);
            assertArrayEquals(expected, generation.ids(), checkpoint);
            assertArrayEquals(expected, streamed.stream().mapToInt(Integer::intValue).toArray(), checkpoint);
        }
    }

    @ParameterizedTest
    @FieldSource("CHECKPOINTS")
    void batchedPrefillMatchesTokenByToken(String checkpoint) throws IOException {
        Golden golden = Golden.load(checkpoint);
        // 60 tokens: full and partial batches of both sizes, at a fraction of the cost of the whole prompt.
        int[] prompt = Arrays.copyOf(golden.promptIds(), 60);
        float[][] oneByOne = sampledLogits(golden, prompt, 1);
        ModelConfig config = ModelConfig.read(golden.modelDir().resolve("config.json"));
        for (int batch : new int[] {40, 7}) {
            float[][] batched = sampledLogits(golden, prompt, batch);
            for (int position = 0; position < prompt.length; position++) {
                for (int i = 0; i < oneByOne[position].length; i++) {
                    assertEquals(oneByOne[position][i], batched[position][i], batchingTolerance(config, oneByOne[position][i]),
                            checkpoint + " batch " + batch + " position " + position + " sample " + i);
                }
            }
        }
    }

    /** Every 37th logit of every prompt position, from batches of {@code batchRows} tokens. */
    private float[][] sampledLogits(Golden golden, int[] prompt, int batchRows) {
        try (TestModel test = TestModel.open(golden.modelDir(), createBackend(), prompt.length, batchRows, batchRows)) {
            SingleSequence model = test.sequence();
            float[] logits = new float[model.config().vocabSize()];
            float[][] sampled = new float[prompt.length][];
            model.forwardInBatches(prompt, 0, Probe.NONE, (first, rows) -> {
                assertEquals(Math.min(batchRows, prompt.length - first), rows);
                for (int row = 0; row < rows; row++) {
                    model.readLogits(row, logits);
                    float[] s = new float[(logits.length + 36) / 37];
                    for (int i = 0; i < s.length; i++) s[i] = logits[i * 37];
                    sampled[first + row] = s;
                }
            });
            assertTrue(Arrays.stream(sampled).allMatch(s -> s != null));
            return sampled;
        }
    }

    /** The ids of the k largest logits, largest first (lower id first on ties): k plain scans. */
    static int[] topIds(float[] logits, int k) {
        int[] top = new int[k];
        for (int rank = 0; rank < k; rank++) {
            int best = -1;
            for (int id = 0; id < logits.length; id++) {
                if (isChosen(top, rank, id)) continue;
                if (best < 0 || logits[id] > logits[best]) best = id;
            }
            top[rank] = best;
        }
        return top;
    }

    private static boolean isChosen(int[] top, int count, int id) {
        for (int i = 0; i < count; i++) if (top[i] == id) return true;
        return false;
    }
}
