package fs.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.cpu.CpuKernels;
import fs.backend.cpu.VectorBackend;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.model.DecoderModel;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.Probe;
import fs.model.SingleSequence;
import fs.model.TensorNaming;
import fs.model.TensorRole;
import fs.safetensors.SafetensorsWriter;
import fs.source.ModelSource;
import fs.tensor.DType;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * fs quantize on a mixture of experts: models/q-moe (qwen3moe, 8 experts of 256, top 3) quantized by fs is
 * llama-quantize's file of the same BF16 weights, byte for byte (the expert stacks row by row, llama.cpp's mix for
 * eight experts, the router in F32); the same weights as a Hugging Face checkpoint (an [out, in] tensor per expert)
 * give the same tensors; a checkpoint with dense layers is refused in one line.
 */
class MoeQuantizeCommandTest {
    private static final Path Q_MOE = Path.of(System.getProperty("fs.repo"), "models", "q-moe");
    private static final String BF16 = Q_MOE.resolve("model-BF16.gguf").toString();
    private static final Path TINY_MOE = Path.of(System.getProperty("fs.repo"), "models", "tiny-moe");

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "Q2_K", "IQ2_XXS"})
    void eachPresetIsLlamaQuantizesFileOfTheSameWeights(String preset) {
        Path out = dir.resolve(preset + ".gguf");
        List<String> args = new ArrayList<>(List.of("quantize", BF16, "-o", out.toString(), "--type", preset, "-t", "3"));
        // llama-quantize made IQ2_XXS with q-moe's imatrix.gguf (llama-imatrix's, per-expert counts)
        if (preset.equals("IQ2_XXS")) args.addAll(List.of("--imatrix", Q_MOE.resolve("imatrix.gguf").toString()));
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertEquals(0, run.exitCode(), run.err());
        assertSameTensors(Q_MOE.resolve("model-" + preset + ".gguf"), out, preset);
    }

    /** The same tensors, byte for byte; in the same order unless {@code what} is BF16 (convert's order, not quantize's). */
    private static void assertSameTensors(Path expectedFile, Path actualFile, String what) {
        try (GgufFile expected = GgufFile.open(expectedFile); GgufFile actual = GgufFile.open(actualFile)) {
            var names = expected.tensors().stream().map(GgufTensor::name);
            var written = actual.tensors().stream().map(GgufTensor::name);
            if (what.equals("BF16")) {
                names = names.sorted();
                written = written.sorted();
            }
            assertEquals(names.toList(), written.toList());
            for (GgufTensor tensor : actual.tensors()) {
                GgufTensor theirs = expected.tensor(tensor.name()).orElseThrow();
                assertEquals(theirs.type(), tensor.type(), tensor.name());
                assertArrayEquals(theirs.shape(), tensor.shape(), tensor.name());
                assertArrayEquals(theirs.data().toArray(ValueLayout.JAVA_BYTE),
                        tensor.data().toArray(ValueLayout.JAVA_BYTE), what + " " + tensor.name());
            }
        }
    }

    /**
     * q-moe's BF16 weights written as a Hugging Face checkpoint (each expert's matrix its own tensor): fs quantize
     * stacks the experts as convert_hf_to_gguf.py does, so Q4_K_M from it is llama-quantize's Q4_K_M tensor for
     * tensor, and BF16 from it has q-moe's stacks byte for byte.
     */
    @Test
    void aHuggingFaceCheckpointsExpertsAreStackedAsConvertDoes() throws IOException {
        Path checkpoint = huggingFaceCopyOfQMoe();
        Path q4 = dir.resolve("q4.gguf");
        CliRun run = CliRun.of("quantize", checkpoint.toString(), "-o", q4.toString(), "--type", "Q4_K_M", "-t", "2");
        assertEquals(0, run.exitCode(), run.err());
        assertSameTensors(Q_MOE.resolve("model-Q4_K_M.gguf"), q4, "Q4_K_M");
        Path bf16 = dir.resolve("bf16.gguf");
        run = CliRun.of("quantize", checkpoint.toString(), "-o", bf16.toString(), "--type", "BF16");
        assertEquals(0, run.exitCode(), run.err());
        assertSameTensors(Q_MOE.resolve("model-BF16.gguf"), bf16, "BF16");
        try (GgufFile written = GgufFile.open(bf16); GgufFile converted = GgufFile.open(Path.of(BF16))) {
            var m = written.metadata();
            assertEquals("qwen3moe", m.string("general.architecture"));
            assertEquals(8, m.nonNegativeInt("qwen3moe.expert_count"));
            assertEquals(3, m.nonNegativeInt("qwen3moe.expert_used_count"));
            assertEquals(256, m.nonNegativeInt("qwen3moe.expert_feed_forward_length"));
            // every hyperparameter as tools/reference/to_gguf.py wrote q-moe's (feed_forward_length too:
            // intermediate_size), but rope.dimension_count, which to_gguf.py adds and convert_hf_to_gguf.py does not
            // write for qwen3moe (llama.cpp takes the head dimension without it)
            for (var entry : converted.metadata().values().entrySet()) {
                if (!entry.getKey().startsWith("qwen3moe.") || entry.getKey().endsWith("rope.dimension_count")) continue;
                assertEquals(entry.getValue(), m.values().get(entry.getKey()), entry.getKey());
            }
        }
    }

    /** tiny-moe keeps layer 1 dense (mlp_only_layers [1]): llama.cpp's qwen3moe has no such layer. */
    @Test
    void aCheckpointWithDenseLayersIsRefusedInOneLine() throws IOException {
        Path out = dir.resolve("out.gguf");
        CliRun run = CliRun.of("quantize", TINY_MOE.toString(), "-o", out.toString(), "--type", "Q8_0");
        assertEquals(1, run.exitCode(), run.err());
        assertEquals(1, run.err().strip().lines().count(), run.err());
        assertTrue(run.err().contains("layer 1 has a dense feed-forward (mlp_only_layers / decoder_sparse_step)"),
                run.err());
        assertTrue(run.err().contains("qwen3moe"), run.err());
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(), files.toList());
        }
    }

    /**
     * One model in its two forms: q-moe's Hugging Face copy (per-expert tensors, config.json) and its GGUF (expert
     * stacks, qwen3moe metadata) give the same logits, bit for bit, on the exact path: the same weights read through
     * either source's names and config.
     */
    @Test
    void theCheckpointAndTheGgufOfOneModelGiveTheSameLogits() throws IOException {
        Path checkpoint = huggingFaceCopyOfQMoe();
        int[] tokens = {1351, 3424, 5650, 3424, 5201, 2304, 3924, 6908};
        float[][] fromCheckpoint = logits(checkpoint, tokens), fromGguf = logits(Path.of(BF16), tokens);
        for (int position = 0; position < tokens.length; position++) {
            assertArrayEquals(fromGguf[position], fromCheckpoint[position], "position " + position);
        }
    }

    /** Every position's logits of {@code tokens} on the model at {@code path}, one token at a time (Vector API). */
    private static float[][] logits(Path path, int[] tokens) {
        try (ModelSource source = ModelSource.open(path);
                VectorBackend backend = new VectorBackend(2, CpuKernels.vectorApi())) {
            ModelConfig config = source.config();
            SingleSequence model = new SingleSequence(
                    new DecoderModel(config, ModelWeights.bind(config, source.tensors()), backend),
                    new SingleSequence.Shape(16, 1, 1));
            float[][] logits = new float[tokens.length][config.vocabSize()];
            for (int i = 0; i < tokens.length; i++) {
                model.forward(new int[] {tokens[i]}, i, Probe.NONE);
                model.readLogits(0, logits[i]);
            }
            return logits;
        }
    }

    /** q-moe's config, tokenizer and BF16 weights (norms and router F32, as the GGUF holds them) under HF names. */
    private Path huggingFaceCopyOfQMoe() throws IOException {
        Path checkpoint = Files.createDirectory(dir.resolve("hf"));
        for (String file : List.of("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json")) {
            Files.copy(Q_MOE.resolve(file), checkpoint.resolve(file));
        }
        SafetensorsWriter writer = new SafetensorsWriter();
        TensorNaming gguf = TensorNaming.GGUF, hf = TensorNaming.HUGGING_FACE;
        try (GgufFile file = GgufFile.open(Path.of(BF16))) {
            copy(writer, file, gguf.embedding(), hf.embedding());
            copy(writer, file, gguf.norm(), hf.norm());
            for (int l = 0; l < 2; l++) {
                for (TensorRole role : TensorRole.values()) {
                    if (role == TensorRole.GATE || role == TensorRole.UP || role == TensorRole.DOWN) continue;
                    if (!role.perExpert()) {
                        copy(writer, file, gguf.layer(l, role), hf.layer(l, role));
                        continue;
                    }
                    GgufTensor stack = file.tensor(gguf.layer(l, role)).orElseThrow();
                    long[] shape = stack.shape();
                    long bytes = stack.data().byteSize() / shape[0];
                    for (int e = 0; e < shape[0]; e++) {
                        writer.tensor(hf.expert(l, role, e), stack.type(), new long[] {shape[1], shape[2]},
                                stack.data().asSlice(e * bytes, bytes).toArray(ValueLayout.JAVA_BYTE));
                    }
                }
            }
        }
        writer.write(checkpoint.resolve("model.safetensors"));
        return checkpoint;
    }

    private static void copy(SafetensorsWriter writer, GgufFile file, String from, String to) {
        GgufTensor tensor = file.tensor(from).orElseThrow();
        assertTrue(tensor.type() == DType.BF16 || tensor.type() == DType.F32, from);
        writer.tensor(to, tensor.type(), tensor.shape(), tensor.data().toArray(ValueLayout.JAVA_BYTE));
    }
}
