package fs.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.format.ReferenceDequantizer;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.GgufValue;
import fs.gguf.GgufValueType;
import fs.gguf.QTied;
import fs.safetensors.Checkpoint;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class QuantizeCommandTest {
    private static final String BF16 = QTied.gguf("BF16").toString();
    private static final Path TINY_TIED = Path.of(System.getProperty("fs.repo"), "models", "tiny-tied");

    @TempDir
    Path dir;

    private static String logits(String model) {
        CliRun run = CliRun.of("logits", model, "--tokens", "1,2,3,100,2000,8001,7000", "--top", "5", "-t", "2",
                "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        return run.out();
    }

    /**
     * A BF16 file quantized to BF16 is its tensors copied, in llama-quantize's order, with its metadata: the same
     * model, byte for byte.
     */
    @Test
    void aBf16GgufToBf16IsTheSameModelInLlamaQuantizesOrder() {
        Path out = dir.resolve("out.gguf");
        CliRun run = CliRun.of("quantize", BF16, "-o", out.toString(), "--type", "BF16", "-t", "3");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.err().contains("fs: wrote " + out + ": 24 tensors"), run.err());
        try (GgufFile source = GgufFile.open(QTied.gguf("BF16"));
                GgufFile llama = GgufFile.open(QTied.gguf("Q8_0"));
                GgufFile written = GgufFile.open(out)) {
            assertEquals(llama.tensors().stream().map(GgufTensor::name).toList(),
                    written.tensors().stream().map(GgufTensor::name).toList());
            for (GgufTensor tensor : written.tensors()) {
                GgufTensor original = source.tensor(tensor.name()).orElseThrow();
                assertEquals(original.type(), tensor.type());
                assertArrayEquals(original.shape(), tensor.shape());
                assertArrayEquals(original.data().toArray(ValueLayout.JAVA_BYTE), tensor.data().toArray(ValueLayout.JAVA_BYTE));
            }
            Map<String, GgufValue> expected = new HashMap<>(source.metadata().values());
            expected.put("general.quantization_version", new GgufValue(GgufValueType.UINT32, 2L));
            assertEquals(expected, written.metadata().values());
        }
    }

    /**
     * Without a terminal on stderr (as here) the bar is not redrawn but printed as plain lines, one each tenth of the
     * bytes or so (a large tensor can cross several tenths at once), the last one complete.
     */
    @Test
    void withoutATerminalTheProgressIsAPlainLineAtEachTenth() {
        Path out = dir.resolve("out.gguf");
        CliRun run = CliRun.of("quantize", BF16, "-o", out.toString(), "--type", "Q8_0", "-t", "2");
        assertEquals(0, run.exitCode(), run.err());
        assertFalse(run.err().contains("\r"), run.err());
        List<String> lines =
                run.err().lines().filter(line -> line.matches("\\[\\d+/24] +\\d+% \\[[#-]{24}] .*")).toList();
        assertTrue(lines.size() >= 2 && lines.size() <= 11, run.err());
        int[] percents = lines.stream().mapToInt(line -> Integer.parseInt(line.replaceAll("^\\S+ +(\\d+)%.*", "$1")))
                .toArray();
        for (int i = 1; i < percents.length; i++) assertTrue(percents[i] > percents[i - 1], run.err());
        assertTrue(lines.getLast().startsWith("[24/24] 100% [########################] "), run.err());
    }

    /**
     * Every preset of the zoo made by fs quantize is llama-quantize's file of the same BF16 weights, tensor for
     * tensor and byte for byte: the same type mix, the same order, the same blocks (IQ2_XXS with the zoo's imatrix).
     */
    @ParameterizedTest
    @ValueSource(strings = {"Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "Q2_K", "IQ2_XXS"})
    void eachPresetIsLlamaQuantizesFileOfTheSameWeights(String preset) {
        Path out = dir.resolve(preset + ".gguf");
        String[] imatrix = preset.equals("IQ2_XXS")
                ? new String[] {"--imatrix", QTied.gguf("BF16").resolveSibling("imatrix.gguf").toString()} : new String[0];
        List<String> args = new java.util.ArrayList<>(List.of("quantize", BF16, "-o", out.toString(), "--type", preset));
        args.addAll(List.of(imatrix));
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertEquals(0, run.exitCode(), run.err());
        try (GgufFile llama = GgufFile.open(QTied.gguf(preset)); GgufFile written = GgufFile.open(out)) {
            assertEquals(llama.tensors().stream().map(GgufTensor::name).toList(),
                    written.tensors().stream().map(GgufTensor::name).toList());
            for (GgufTensor tensor : written.tensors()) {
                GgufTensor theirs = llama.tensor(tensor.name()).orElseThrow();
                assertEquals(theirs.type(), tensor.type(), tensor.name());
                assertArrayEquals(theirs.data().toArray(ValueLayout.JAVA_BYTE), tensor.data().toArray(ValueLayout.JAVA_BYTE),
                        preset + " " + tensor.name());
            }
        }
    }

    /** Without --type fs quantize writes Q4_K_M, docs/QUANTIZATION.md's default: llama-quantize's Q4_K_M file. */
    @Test
    void withoutATypeItWritesQ4KM() {
        Path out = dir.resolve("default.gguf");
        CliRun run = CliRun.of("quantize", BF16, "-o", out.toString());
        assertEquals(0, run.exitCode(), run.err());
        try (GgufFile llama = GgufFile.open(QTied.gguf("Q4_K_M")); GgufFile written = GgufFile.open(out)) {
            for (GgufTensor tensor : written.tensors()) {
                GgufTensor theirs = llama.tensor(tensor.name()).orElseThrow();
                assertEquals(theirs.type(), tensor.type(), tensor.name());
                assertArrayEquals(theirs.data().toArray(ValueLayout.JAVA_BYTE), tensor.data().toArray(ValueLayout.JAVA_BYTE));
            }
        }
    }

    /**
     * From a Hugging Face directory: the file fs writes loads in fs as the same model (the same logits, the same
     * token ids), with the token types, special ids and template convert_hf_to_gguf.py writes.
     */
    @Test
    void aHuggingFaceDirectoryBecomesAGgufOfTheSameModel() throws IOException {
        Path out = dir.resolve("tiny.gguf");
        CliRun run = CliRun.of("quantize", TINY_TIED.toString(), "-o", out.toString(), "--type", "bf16");
        assertEquals(0, run.exitCode(), run.err());
        assertEquals(logits(TINY_TIED.toString()), logits(out.toString()));
        String text = "Hello <|im_start|>user\nwörld<|im_end|> <think> x = 1 + 2;\n\n 日本語 🙂 <|fim_prefix|>";
        CliRun fromGguf = CliRun.of("tokenize", out.toString(), text);
        CliRun fromJson = CliRun.of("tokenize", TINY_TIED.toString(), text);
        assertEquals(0, fromGguf.exitCode(), fromGguf.err());
        assertEquals(fromJson.out(), fromGguf.out());
        JsonNode tokenizerConfig = new ObjectMapper().readTree(TINY_TIED.resolve("tokenizer_config.json").toFile());
        try (GgufFile gguf = GgufFile.open(out); Checkpoint checkpoint = Checkpoint.open(TINY_TIED)) {
            var m = gguf.metadata();
            assertEquals("qwen3", m.string("general.architecture"));
            assertEquals(32, m.nonNegativeInt("general.file_type"));
            assertEquals(2, m.nonNegativeInt("general.quantization_version"));
            assertEquals(tokenizerConfig.get("chat_template").asText(), m.string("tokenizer.chat_template"));
            assertEquals("gpt2", m.string("tokenizer.ggml.model"));
            assertEquals("qwen2", m.string("tokenizer.ggml.pre"));
            String[] tokens = m.array("tokenizer.ggml.tokens", GgufValueType.STRING).strings();
            long[] types = m.array("tokenizer.ggml.token_type", GgufValueType.INT32).longs();
            assertEquals(151936, tokens.length); // the embedding's rows
            assertEquals("<|im_start|>", tokens[151644]);
            assertEquals(3, types[151644]); // special: CONTROL
            assertEquals("<think>", tokens[151667]);
            assertEquals(4, types[151667]); // not special: USER_DEFINED
            assertEquals(3, types[151659]); // <|fim_prefix|> is not special, but looks it: CONTROL, as convert does
            assertEquals("[PAD151669]", tokens[151669]);
            assertEquals(5, types[151669]);
            assertEquals(1, types[0]);
            assertEquals(151643, m.nonNegativeInt("tokenizer.ggml.bos_token_id")); // config.json's
            assertEquals(151645, m.nonNegativeInt("tokenizer.ggml.eos_token_id")); // tokenizer_config's <|im_end|>
            assertEquals(151643, m.nonNegativeInt("tokenizer.ggml.padding_token_id"));
            assertEquals(151387, m.array("tokenizer.ggml.merges", GgufValueType.STRING).length());
            assertEquals(64, m.nonNegativeInt("qwen3.embedding_length"));
            assertEquals(16, m.nonNegativeInt("qwen3.attention.key_length"));
            assertFalse(gguf.tensor("output.weight").isPresent(), "tied: no output.weight");
            Tensor embedding = checkpoint.tensor("model.embed_tokens.weight");
            GgufTensor embd = gguf.tensor("token_embd.weight").orElseThrow();
            assertEquals(DType.BF16, embd.type());
            assertArrayEquals(embedding.data().toArray(ValueLayout.JAVA_BYTE), embd.data().toArray(ValueLayout.JAVA_BYTE));
            Tensor norm = checkpoint.tensor("model.layers.1.post_attention_layernorm.weight");
            GgufTensor ffnNorm = gguf.tensor("blk.1.ffn_norm.weight").orElseThrow();
            assertEquals(DType.F32, ffnNorm.type()); // norms widen to F32, as convert_hf_to_gguf.py writes them
            float[] expected = new float[(int) norm.columns()];
            float[] actual = new float[expected.length];
            ReferenceDequantizer.decode(DType.BF16, norm.data(), expected);
            ReferenceDequantizer.decode(DType.F32, ffnNorm.data(), actual);
            assertArrayEquals(expected, actual);
        }
    }

    private void assertOneLineError(CliRun run, String expected) {
        assertEquals(1, run.exitCode(), run.err());
        assertTrue(run.err().contains(expected), run.err());
        assertEquals(1, run.err().strip().lines().count(), run.err());
        assertTrue(run.out().isEmpty());
    }

    @Test
    void whatCannotBeDoneIsOneLineAndNoFile() throws IOException {
        Path out = dir.resolve("out.gguf");
        assertOneLineError(CliRun.of("quantize", BF16, "-o", out.toString(), "--type", "IQ2_XXS"),
                "--type IQ2_XXS needs an importance matrix (--imatrix FILE");
        CliRun unknownType = CliRun.of("quantize", BF16, "-o", out.toString(), "--type", "Q3_K_M");
        assertEquals(2, unknownType.exitCode(), unknownType.err());
        assertTrue(unknownType.err().startsWith("fs: invalid value for --type: 'Q3_K_M' is not a type fs quantize "
                + "makes (it makes Q8_0, Q6_K"), unknownType.err());
        assertOneLineError(CliRun.of("quantize", BF16, "-o", out.toString(), "--type", "Q8_0", "--imatrix", BF16),
                "'imatrix.datasets' is missing");
        assertOneLineError(CliRun.of("quantize", QTied.gguf("Q4_0").toString(), "-o", out.toString(), "--type", "F16"),
                "token_embd.weight is stored as Q6_K");
        assertOneLineError(CliRun.of("quantize", BF16, "-o", BF16, "--type", "Q8_0"), "is the model being quantized");
        assertOneLineError(CliRun.of("quantize", BF16, "-o", dir.resolve("no/such/dir/x.gguf").toString(), "--type",
                "BF16"), "no directory");
        assertEquals(2, CliRun.of("quantize", BF16, "-o", out.toString(), "--type", "Q8_0", "-t", "0").exitCode());
        assertEquals(2, CliRun.of("quantize", BF16, "--type", "Q8_0").exitCode()); // no -o
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(), files.toList());
        }
    }
}
