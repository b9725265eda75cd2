package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.Backend;
import fs.gguf.GgufFile;
import fs.gguf.QTied;
import fs.model.DecoderModel;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.Probe;
import fs.model.SingleSequence;
import fs.source.ModelSource;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The dense GGUF files (models/q-tied in every type; models/q-dense-heldout, other shapes and seed: untied, a GQA group
 * of 4, in the two types whose matmuls take Q8_0 activation blocks) on the native kernels (the best variant this CPU
 * runs) against golden-T.json, the float64 logits of each file's exact weights. The native path rounds every matmul's input to int8 (per group, to the
 * nearest of 255 steps of its own, at most amax/127 of its block), so it cannot reproduce the golden to 1e-3 as the Vector API path does; how far
 * that rounding alone takes these logits is measured by {@link Int8ActivationsBackend}, the exact Vector API path
 * on the same int8-rounded inputs. The tolerance is twice that distance plus the exact path's 1e-3: the native
 * path's float sums decide a few roundings of ties the other way (each moves an activation by a whole step, up to
 * 0.1 in a logit when it is the LM head's input), a different draw of the same noise. Each file's line reports,
 * beside it, llama.cpp's own distance from the golden (llama-T.json), over the ids both have, and the native path's
 * largest distance must be no larger: the gate for the native kernels being the CPU's default. llama.cpp rounds
 * activations the same way but coarser (one step per 256 values for K-quant weights where the native path has one
 * per 32; one per 32 for Q8_0 and Q4_0 weights where it has one per 4): with llama.cpp's own step per 32 the Q8_0
 * and Q4_0 distances were draws of the same noise, and q-dense-heldout's lost (models/README.md).
 */
class NativeDenseGoldenTest {
    private static final double EXACT_TOLERANCE = 1e-3;
    private static final Path MODELS = Path.of(System.getProperty("fs.repo"), "models");
    /** The types models/q-dense-heldout keeps (models/README.md). */
    private static final List<String> HELDOUT_TYPES = List.of("Q8_0", "Q4_0");

    /** Every q-tied file, then every q-dense-heldout one: (model directory, file type). */
    static Stream<Arguments> files() {
        return Stream.concat(QTied.TYPES.stream().map(type -> Arguments.of("q-tied", type)),
                HELDOUT_TYPES.stream().map(type -> Arguments.of("q-dense-heldout", type)));
    }

    /** How many tokens the two sequences share before their first difference. */
    private static int commonPrefix(int[] a, int[] b) {
        int n = 0;
        while (n < a.length && n < b.length && a[n] == b[n]) n++;
        return n;
    }

    private static Backend nativeBackend() {
        CpuKernels kernels = CpuKernels.nativeKernels(null);
        assertTrue(kernels.nativeKernels() != null, "the native kernels load: " + kernels.unavailable());
        return new VectorBackend(2, kernels);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("files")
    void theLogitsAreAsFarFromTheExactGoldenAsInt8ActivationsTakeThem(String model, String type) throws IOException {
        Path dir = MODELS.resolve(model), gguf = dir.resolve("model-" + type + ".gguf");
        TopLogitsGolden golden = TopLogitsGolden.load(dir.resolve("golden-" + type + ".json"));
        List<Map<Integer, Double>> nativeLogits = golden.logits(gguf, nativeBackend());
        List<Map<Integer, Double>> int8Logits = golden.logits(gguf, new Int8ActivationsBackend());
        List<Map<Integer, Double>> llama = TopLogitsGolden.load(dir.resolve("llama-" + type + ".json")).positions();
        double nativeDistance = golden.distance(nativeLogits, null)[0];
        double tolerance = 2 * golden.distance(int8Logits, null)[0] + EXACT_TOLERANCE;
        double[] n = golden.distance(nativeLogits, llama), i = golden.distance(int8Logits, llama);
        double[] l = golden.distance(llama, null);
        System.out.printf(Locale.ROOT, "native %s %s: |logit - exact golden| max %.4f, rms %.4f (int8 activations"
                + " on the exact path: %.4f, %.4f; llama.cpp: %.4f, %.4f; over the ids llama-%s.json has)%n", model,
                type, n[0], n[1], i[0], i[1], l[0], l[1], type);
        assertTrue(nativeDistance <= tolerance, model + " " + type + ": " + nativeDistance + " > " + tolerance);
        // The gate for native being the CPU's default (CpuKernels): no further from the golden than llama.cpp.
        assertTrue(n[0] <= l[0], model + " " + type + ": native's largest distance " + n[0]
                + " is over llama.cpp's " + l[0]);
    }

    /** The q-tied files whose every matrix is in a format the native kernels have (all of them). */
    static List<String> nativeFiles() {
        return QTied.TYPES.stream().filter(type -> {
            try (GgufFile gguf = GgufFile.open(QTied.gguf(type))) {
                return gguf.tensors().stream().allMatch(t -> t.shape().length < 2 || NativeKernels.covers(t.type()));
            }
        }).toList();
    }

    /**
     * Each output of a native matmul is a function of its weight row and input row alone, and the Vector API's other
     * ops are the same for a row whatever the batch (VectorBackend), so on a file of native formats a token decoded
     * alone gets the logits it gets inside a batch, to the bit: the greedy continuation, decoded token by token, and
     * the prompt and that continuation run as one batch. (Greedy decoding itself is an argmax, which an activation's
     * rounding moves wherever two logits are close; how much of the golden's and llama.cpp's it keeps is reported.)
     */
    @ParameterizedTest
    @MethodSource("nativeFiles")
    void aTokenDecodedAloneGetsTheLogitsOfABatchBitForBit(String type) throws IOException {
        TopLogitsGolden golden = TopLogitsGolden.load(QTied.dir().resolve("golden-" + type + ".json"));
        int prompt = golden.tokens().length, steps = golden.greedy().length;
        int[] tokens = Arrays.copyOf(golden.tokens(), prompt + steps);
        float[][] decoded = new float[steps][];
        try (ModelSource source = ModelSource.open(QTied.gguf(type)); Backend backend = nativeBackend()) {
            SingleSequence model = sequence(source, backend, prompt);
            model.forward(golden.tokens(), 0, Probe.NONE);
            for (int step = 0; step < steps; step++) {
                decoded[step] = new float[source.config().vocabSize()];
                model.readLogits(model.logitRows() - 1, decoded[step]);
                tokens[prompt + step] = argmax(decoded[step]);
                if (step + 1 < steps) model.forward(new int[] {tokens[prompt + step]}, prompt + step, Probe.NONE);
            }
        }
        try (ModelSource source = ModelSource.open(QTied.gguf(type)); Backend backend = nativeBackend()) {
            SingleSequence model = sequence(source, backend, prompt + steps);
            int rows = prompt + steps - 1;
            model.forward(Arrays.copyOf(tokens, rows), 0, Probe.NONE);
            float[] batched = new float[source.config().vocabSize()];
            for (int step = 0; step < steps; step++) {
                model.readLogits(prompt - 1 + step, batched);
                assertArrayEquals(decoded[step], batched, type + ": step " + step);
            }
        }
        int[] ids = Arrays.copyOfRange(tokens, prompt, prompt + steps);
        int[] llama = TopLogitsGolden.load(QTied.dir().resolve("llama-" + type + ".json")).greedy();
        System.out.printf(Locale.ROOT, "native q-tied %s: greedy keeps %d of the golden's %d tokens (llama.cpp: %d),"
                + " %d of llama.cpp's%n", type, commonPrefix(golden.greedy(), ids), steps,
                commonPrefix(golden.greedy(), llama), commonPrefix(llama, ids));
    }

    private static SingleSequence sequence(ModelSource source, Backend backend, int rows) {
        ModelConfig config = source.config();
        return new SingleSequence(new DecoderModel(config, ModelWeights.bind(config, source.tensors()), backend),
                new SingleSequence.Shape(64, rows, rows));
    }

    private static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
        return best;
    }
}
