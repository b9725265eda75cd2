package fs.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.backend.Backend;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.gguf.QTied;
import fs.source.ModelSource;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * llama.cpp's GGUF files of q-tied, run from the file alone (config, tensors and names from the GGUF), against
 * golden-T.json: the float64 logits of the file's exact weights for tokens.txt's 48 ids. At every position the top-5
 * ids must be the golden's and their logits within 1e-3; the 8 greedy tokens after the prompt must be the golden's.
 * A backend's test extends this class and says how to create the backend and which files' formats it reads.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS) // so that types() is the backend test's own
public abstract class QTiedGoldenTest {
    /** Every file type of q-tied, each a mix of formats as llama.cpp's presets make them. */
    protected static final List<String> ALL_TYPES = QTied.TYPES;

    /** The file types whose every format the backend computes with. */
    protected abstract List<String> types();

    /** A fresh backend; the test closes it. */
    protected abstract Backend createBackend();

    /** The directory of the files and their goldens: q-tied, or another model laid out as it is (q-moe). */
    protected java.nio.file.Path dir() {
        return QTied.dir();
    }

    private record QTiedGolden(int[] tokens, List<JsonNode> positions, int[] greedy) {
        static QTiedGolden load(java.nio.file.Path dir, String type) throws IOException {
            JsonNode root = new ObjectMapper().readTree(dir.resolve("golden-" + type + ".json").toFile());
            return new QTiedGolden(ints(root.get("tokens")), List.copyOf(root.get("positions").valueStream().toList()),
                    ints(root.get("greedy")));
        }

        private static int[] ints(JsonNode array) {
            return array.valueStream().mapToInt(JsonNode::intValue).toArray();
        }
    }

    /** The model of one GGUF file on a fresh backend, closed with it. */
    private record Run(ModelSource source, Backend backend, SingleSequence model) implements AutoCloseable {
        static Run open(java.nio.file.Path dir, String type, Backend backend, int batchRows, int logitRows) {
            ModelSource source = ModelSource.open(dir.resolve("model-" + type + ".gguf"));
            ModelConfig config = source.config();
            SingleSequence model = new SingleSequence(
                    new DecoderModel(config, ModelWeights.bind(config, source.tensors()), backend),
                    new SingleSequence.Shape(64, batchRows, logitRows));
            return new Run(source, backend, model);
        }

        @Override
        public void close() {
            try {
                backend.close();
            } finally {
                source.close();
            }
        }
    }

    @ParameterizedTest
    @MethodSource("types")
    void everyPositionMatchesTheExactGolden(String type) throws IOException {
        QTiedGolden golden = QTiedGolden.load(dir(), type);
        try (Run run = Run.open(dir(), type, createBackend(), 16, 16)) {
            SingleSequence model = run.model();
            float[] logits = new float[model.config().vocabSize()];
            int[] checked = {0};
            model.forwardInBatches(golden.tokens(), 0, Probe.NONE, (first, rows) -> {
                for (int row = 0; row < rows; row++) {
                    model.readLogits(row, logits);
                    JsonNode expected = golden.positions().get(first + row);
                    int[] topIds = expected.get("top_ids").valueStream().mapToInt(JsonNode::intValue).toArray();
                    String where = type + " position " + (first + row);
                    assertArrayEquals(topIds, ModelGoldenTest.topIds(logits, topIds.length), where + ": top ids");
                    for (int i = 0; i < topIds.length; i++) {
                        assertEquals(expected.get("top_logits").get(i).doubleValue(), logits[topIds[i]],
                                ModelGoldenTest.REFERENCE_TOLERANCE, where + ": logit of " + topIds[i]);
                    }
                    checked[0]++;
                }
            });
            assertEquals(golden.positions().size(), checked[0]);
        }
    }

    @ParameterizedTest
    @MethodSource("types")
    void theGreedyContinuationIsTheGoldens(String type) throws IOException {
        QTiedGolden golden = QTiedGolden.load(dir(), type);
        try (Run run = Run.open(dir(), type, createBackend(), 16, 1)) {
            // No stop ids: the golden's 8 tokens are argmaxes, whatever they are.
            Generator generator = new Generator(run.model(), new int[0], SamplingParams.greedy());
            assertArrayEquals(golden.greedy(), generator.generate(golden.tokens(), golden.greedy().length, id -> {}).ids(),
                    type);
        }
    }
}
