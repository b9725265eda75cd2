package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.ExpertRouting;
import fs.backend.ForwardingBackend;
import fs.backend.Weight;
import fs.backend.cpu.NativeKernels.Activations;
import fs.tensor.DType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Qwen3-MoE GGUF files (models/q-moe in every type, models/q-moe-heldout in the three it keeps) on the native
 * kernels against golden-T.json, the float64 logits of each file's exact weights, with llama.cpp's own logits of the
 * same file (llama-T.json, tools/peer/llama-logits.sh: CPU backend, 2 threads) as the gate, as
 * {@link NativeQTiedGoldenTest} has it for q-tied: the native path's largest |logit − golden| over the golden's top
 * ids must be no larger than llama.cpp's.
 *
 * <p>Unlike a dense model, an MoE turns a small activation error into a large logit one when it flips a router's
 * top-k choice (the routers' smallest k-th/(k+1)-th gaps are ~2e-3, models/README.md): one position then runs another
 * expert and its logits move by a whole expert's contribution. Int8 activations (llama.cpp's, the native kernels')
 * flip some of them; how far that alone takes the logits is measured, as in NativeQTiedGoldenTest, by the exact Vector
 * API path on int8-rounded inputs (here the expert matmuls' too). Where that path itself lands further from the golden
 * than llama.cpp (q-moe Q8_0 and Q4_0 on 2026-12-03: 2.67 vs 2.59 and 0.60 vs 0.47, the rounding flipping other
 * decisions than llama.cpp's does), the gate cannot hold for any kernel that rounds as llama.cpp rounds, and native
 * must instead be no further than that path plus 0.05 (its float sums, whose order changes with the vector width,
 * move a flipped position by a few hundredths): the kernels add nothing to what the rounding does.
 */
class NativeQMoeGoldenTest {
    private static final Path REPO = Path.of(System.getProperty("fs.repo"));

    static Stream<Arguments> files() {
        Stream<Arguments> moe = Stream.of("BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "Q2_K", "IQ2_XXS")
                .map(type -> Arguments.of("q-moe", type));
        Stream<Arguments> heldout =
                Stream.of("Q4_K_M", "Q2_K", "IQ2_XXS").map(type -> Arguments.of("q-moe-heldout", type));
        return Stream.concat(moe, heldout);
    }

    private static Backend nativeBackend() {
        CpuKernels kernels = CpuKernels.nativeKernels(null);
        assertTrue(kernels.nativeKernels() != null, "the native kernels load: " + kernels.unavailable());
        return new VectorBackend(2, kernels);
    }

    /** {@link Int8ActivationsBackend} with the expert matmuls' inputs rounded to int8 too (per row, as dense ones). */
    private static final class Int8ExpertsBackend extends ForwardingBackend {
        private Buffer rounded;

        Int8ExpertsBackend() {
            super(new Int8ActivationsBackend());
            rounded = delegate.allocate(0);
        }

        @Override
        public void matmulExperts(Buffer x, boolean xPerSlot, List<Weight> experts, ExpertRouting routing, Buffer out) {
            CpuWeight first = (CpuWeight) experts.getFirst();
            DType type = first.dtype();
            if (!NativeKernels.covers(type)) {
                delegate.matmulExperts(x, xPerSlot, experts, routing, out);
                return;
            }
            Activations format = Activations.of(type);
            int k = (int) first.columns();
            float[] values = new float[(xPerSlot ? routing.slots() : routing.rows()) * k];
            delegate.read(x, 0, values);
            byte[] quants = Int8Reference.quantize(format, values);
            for (int j = 0; j < values.length; j++) values[j] = (float) Int8Reference.activation(format, quants, 0, j);
            if (rounded.length() < values.length) rounded = delegate.allocate(values.length);
            MemorySegment.copy(values, 0, ((CpuBuffer) rounded).segment(), ValueLayout.JAVA_FLOAT, 0, values.length);
            delegate.matmulExperts(rounded, xPerSlot, experts, routing, out);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("files")
    void nativeIsNoFurtherFromTheExactGoldenThanLlamaCpp(String model, String type) throws IOException {
        Path dir = REPO.resolve("models").resolve(model), gguf = dir.resolve("model-" + type + ".gguf");
        TopLogitsGolden golden = TopLogitsGolden.load(dir.resolve("golden-" + type + ".json"));
        List<Map<Integer, Double>> nativeLogits = golden.logits(gguf, nativeBackend());
        List<Map<Integer, Double>> int8Logits = golden.logits(gguf, new Int8ExpertsBackend());
        List<Map<Integer, Double>> llama = TopLogitsGolden.load(dir.resolve("llama-" + type + ".json")).positions();
        double[] n = golden.distance(nativeLogits, llama), i = golden.distance(int8Logits, llama);
        double[] l = golden.distance(llama, null), all = golden.distance(nativeLogits, null);
        System.out.printf(Locale.ROOT, "native %s %s: |logit - exact golden| max %.4f, rms %.4f (all top-5 ids: %.4f,"
                + " %.4f), top-1 differs at %d of %d (int8 activations on the exact path: %.4f, %.4f, %d; llama.cpp:"
                + " %.4f, %.4f, %d; over the ids llama-%s.json has)%n", model, type, n[0], n[1], all[0], all[1],
                golden.top1Differences(nativeLogits), golden.positions().size(), i[0], i[1],
                golden.top1Differences(int8Logits), l[0], l[1], golden.top1Differences(llama), type);
        // The gate for native being the CPU's default (CpuKernels): no further from the golden than llama.cpp, unless
        // rounding the activations alone, on the exact path, already is (see the class comment).
        if (i[0] <= l[0]) {
            assertTrue(n[0] <= l[0], model + " " + type + ": native's largest distance " + n[0]
                    + " is over llama.cpp's " + l[0]);
        } else {
            assertTrue(n[0] <= i[0] + 0.05, model + " " + type + ": native's largest distance " + n[0]
                    + " is over int8 rounding's on the exact path, " + i[0] + " (llama.cpp: " + l[0] + ")");
        }
    }
}
