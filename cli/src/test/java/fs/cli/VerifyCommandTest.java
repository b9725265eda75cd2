package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.gguf.QTied;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** fs verify on PoCL (CI's OpenCL) against the Vector API path, and --native against it too. */
class VerifyCommandTest {
    private static final String MODEL = Path.of(System.getProperty("fs.repo"), "models", "tiny-tied").toString();

    private record Result(int exit, String out, String err) {}

    private static Result verify(String... args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        String[] all = new String[args.length + 1];
        all[0] = "verify";
        System.arraycopy(args, 0, all, 1, args.length);
        int exit = Main.execute(new PrintWriter(out), new PrintWriter(err), all);
        return new Result(exit, out.toString(), err.toString());
    }

    @Test
    void openClAgreesWithTheCpuOpByOp() throws Exception {
        Result result = verify(MODEL, "--tokens", "9707,11,1879,0,151644", "--json");
        assertEquals(0, result.exit(), result.err());
        JsonNode report = new ObjectMapper().readTree(result.out());
        assertTrue(report.get("agree").asBoolean());
        assertTrue(report.get("first_over_threshold").isNull());
        assertEquals(6, report.get("top1_agreement").asInt()); // 5 prefill positions + the decode pass
        double worst = 0;
        for (JsonNode op : report.get("ops")) worst = Math.max(worst, op.get("nmse").asDouble());
        assertTrue(worst < 1e-9, "largest NMSE " + worst);
        assertEquals(2 * (1 + 17 * 2 + 2), report.get("ops").size());
    }

    /** Block-format weights (Q4_K_M mixes Q4_K, Q6_K and Q5_K; IQ2_XXS adds Q2_K's blocks) on both paths. */
    @ParameterizedTest
    @ValueSource(strings = {"Q4_K_M", "IQ2_XXS", "Q8_0"})
    void openClAgreesWithTheCpuOnAQuantizedFile(String type) throws Exception {
        Result result = verify(QTied.gguf(type).toString(), "--tokens", "1,2,3,4,5", "--json");
        assertEquals(0, result.exit(), result.err());
        JsonNode report = new ObjectMapper().readTree(result.out());
        assertTrue(report.get("agree").asBoolean(), result.out());
        assertTrue(report.get("first_over_threshold").isNull(), result.out());
        assertEquals(6, report.get("top1_agreement").asInt());
    }

    /**
     * A split model, every op on its own device against the exact path: tiny-moe (3 layers, the middle one dense) with
     * its last 2 layers on OpenCL and the first one's experts on the CPU; the hand-offs between the two are in the
     * forward that each op's input comes from.
     */
    @Test
    void aSplitModelAgreesWithTheCpuOpByOp() throws Exception {
        String moe = Path.of(System.getProperty("fs.repo"), "models", "tiny-moe").toString();
        Result result = verify(moe, "--tokens", "9707,11,1879,0", "-ngl", "2", "--n-cpu-moe", "1", "--json");
        assertEquals(0, result.exit(), result.err());
        JsonNode report = new ObjectMapper().readTree(result.out());
        assertTrue(report.get("agree").asBoolean(), result.out());
        assertEquals(5, report.get("top1_agreement").asInt());
        assertTrue(result.err().contains("(-ngl 2: 2/4 layers on OpenCL ("), result.err());
        Result nativeSplit = verify(moe, "-ngl", "2", "--native");
        assertEquals(2, nativeSplit.exit(), nativeSplit.err());
        assertTrue(nativeSplit.err().startsWith("fs: -ngl, --cpu-moe and --n-cpu-moe have no use with --native"),
                nativeSplit.err());
    }

    @Test
    void textReportEndsWithTheVerdict() {
        Result result = verify(MODEL, "-p", "Hello world");
        assertEquals(0, result.exit(), result.err());
        assertTrue(result.out().contains("every op within the threshold"), result.out());
        assertTrue(result.out().strip().endsWith("OK: the backends agree"), result.out());
    }

    @Test
    void aThresholdNoFloat32PathCanMeetFailsWithTheFirstOpNamed() {
        Result result = verify(MODEL, "--tokens", "1,2,3", "--threshold", "0");
        assertEquals(1, result.exit());
        assertTrue(result.out().contains("first op over the threshold: prefill layer 0 "), result.out());
    }

    /** --tokens reads ids as run, logits and detokenize do: separated by spaces, commas or both. */
    @Test
    void tokensAreReadWithSpacesAsWithCommas() throws Exception {
        Result commas = verify(MODEL, "--tokens", "9707,11,1879", "--json");
        Result spaces = verify(MODEL, "--tokens", "9707 11 1879", "--json");
        assertEquals(0, commas.exit(), commas.err());
        assertEquals(0, spaces.exit(), spaces.err());
        JsonNode byCommas = new ObjectMapper().readTree(commas.out());
        JsonNode bySpaces = new ObjectMapper().readTree(spaces.out());
        assertEquals(4, bySpaces.get("positions").asInt()); // 3 prefill positions + the decode pass
        assertEquals(byCommas.get("oracle_top1"), bySpaces.get("oracle_top1"));

        // Checked before OpenCL is looked for: the id after a space is read, and refused for the vocabulary.
        Result outside = verify(MODEL, "--tokens", "[1, 2 999999]");
        assertEquals(1, outside.exit());
        assertEquals("fs: --tokens: token id 999999 is outside the vocabulary (0..151935)", outside.err().strip());
        Result notAnId = verify("/nonexistent/model", "--tokens", "9707 eleven");
        assertEquals(2, notAnId.exit());
        assertEquals("fs: invalid value for --tokens: 'eleven' is not a token id (ids are integers from 0, separated "
                + "by spaces or commas); see 'fs verify --help'", notAnId.err().strip());
    }

    /**
     * --native: every matmul of a quantized file (Q4_K_M mixes Q4_K, Q6_K and Q5_K; Q8_0's activations are Q8_0
     * blocks) run again on the native kernels from the exact path's input is within its int8 bound (the rounding's
     * worst case; NativeMatmulCheckTest shows an output moved by a wrong block's size is outside it).
     */
    @ParameterizedTest
    @ValueSource(strings = {"Q4_K_M", "Q8_0"})
    void theNativeKernelsAreWithinTheirInt8BoundMatmulByMatmul(String type) throws Exception {
        Result result = verify(QTied.gguf(type).toString(), "--tokens", "1,2,3,4,5", "--native", "--json");
        assertEquals(0, result.exit(), result.err());
        assertTrue(result.err().startsWith("fs: verifying the native "), result.err());
        JsonNode report = new ObjectMapper().readTree(result.out());
        assertTrue(report.get("agree").asBoolean(), result.out());
        assertEquals(2 * 7 + 1, report.get("ops").size(), "seven matmuls per layer and the logits");
        for (JsonNode op : report.get("ops")) {
            double ratio = op.get("bound_ratio").asDouble();
            assertTrue(ratio > 0 && ratio <= 1, op.toString());
            assertTrue(op.get("nmse").asDouble() < 1e-3, op.toString());
        }
        assertEquals(5, report.get("positions").asInt());

        Result text = verify(QTied.gguf(type).toString(), "--tokens", "1,2,3,4,5", "--native");
        assertEquals(0, text.exit(), text.err());
        assertTrue(text.out().strip().endsWith("OK: every native matmul is within its int8 bound"), text.out());
    }

    @Test
    void nativeRefusesWhatItHasNoUseForInOneLine() {
        Result device = verify(QTied.gguf("Q8_0").toString(), "--native", "--device", "0");
        assertEquals(2, device.exit());
        assertEquals("fs: --device has no use with --native (it checks the CPU's kernels); see 'fs verify --help'",
                device.err().strip());
    }

    /** Float weights (tiny-tied's are BF16) have native kernels too: within the same bound. */
    @Test
    void nativeChecksAFloatModel() {
        Result result = verify(MODEL, "--tokens", "1,2", "--native");
        assertEquals(0, result.exit(), result.err());
        assertTrue(result.out().strip().endsWith("OK: every native matmul is within its int8 bound"), result.out());
    }

    @Test
    void badInputIsOneLine() {
        Result result = verify(MODEL, "--tokens", "1,999999");
        assertEquals(1, result.exit());
        assertEquals(1, result.err().strip().lines().count(), result.err());
        assertTrue(result.err().contains("999999"), result.err());
    }
}
