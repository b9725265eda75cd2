package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.gguf.GgufFile;
import fs.gguf.GgufWriter;
import fs.gguf.QTied;
import fs.model.Golden;
import fs.model.ModelConfig;
import fs.server.ModelDetails;
import fs.source.ModelSource;
import fs.tensor.DType;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ModelDescriptionTest {
    @TempDir
    Path dir;

    /** As llama-bench's model column shows them: architecture, size label, llama_ftype_name. */
    @Test
    void aModelIsNamedAsLlamaCppNamesIt() {
        try (ModelSource gguf = ModelSource.open(QTied.gguf("Q4_K_M"));
                ModelSource directory = ModelSource.open(Golden.modelDir("tiny-tied"))) {
            // q-tied: 8064 × 256 embedding and two layers of 4 · 128-wide query heads, 2 kv heads, 768 intermediate
            long layer = 256 * 512 + 2 * 256 * 256 + 512 * 256 + 3 * 256 * 768 + 2 * 256 + 2 * 128;
            assertEquals(8064 * 256 + 2 * layer + 256, ModelDescription.parameters(gguf));
            assertEquals("qwen3 4.0M Q4_K - Medium", ModelDescription.of(gguf));
            assertEquals("qwen3 10M BF16", ModelDescription.of(directory)); // 9.80 million
        }
    }

    /** What fs serve says of a model (Ollama's /api/tags and /api/show show it): the same names, and its files. */
    @Test
    void servedDetailsAreTheFilesFormatFamilySizeAndType() throws Exception {
        try (ModelSource gguf = ModelSource.open(QTied.gguf("Q4_K_M"));
                ModelSource directory = ModelSource.open(Golden.modelDir("tiny-tied"))) {
            ModelDetails quantized = ModelDescription.details(gguf);
            assertEquals("gguf", quantized.format());
            assertEquals("qwen3", quantized.family());
            assertEquals(ModelDescription.parameters(gguf), quantized.parameters());
            assertEquals("4.0M", quantized.sizeLabel());
            assertEquals("Q4_K - Medium", quantized.fileType());
            assertTrue(quantized.bytes() < quantized.parameters(), "under a byte per parameter: " + quantized);
            assertEquals(Files.getLastModifiedTime(gguf.path()).toInstant(), quantized.modified());
            ModelDetails checkpoint = ModelDescription.details(directory);
            assertEquals("safetensors", checkpoint.format());
            assertEquals("BF16", checkpoint.fileType());
            assertEquals(2 * checkpoint.parameters(), checkpoint.bytes(), "two bytes a parameter");
        }
    }

    @Test
    void theReleasedQwen3ShapesHaveLlamaCppsLabels() {
        assertEquals("0.6B", ModelDescription.sizeLabel(config(28, 1024), 596_049_920L));
        assertEquals("1.7B", ModelDescription.sizeLabel(config(28, 2048), 2_031_739_904L));
        assertEquals("4B", ModelDescription.sizeLabel(config(36, 2560), 4_022_468_096L));
        assertEquals("8B", ModelDescription.sizeLabel(config(36, 4096), 8_190_735_360L));
        assertEquals("14B", ModelDescription.sizeLabel(config(40, 5120), 14_768_307_200L));
        assertEquals("32B", ModelDescription.sizeLabel(config(64, 5120), 32_762_123_264L));
        assertEquals("596M", ModelDescription.sizeLabel(config(27, 1024), 596_049_920L), "another shape: the count");
    }

    /** gguf-py's general.size_label: at least two significant digits. */
    @Test
    void otherShapesAreLabelledByTheirParameterCount() {
        assertEquals("9.4M", ModelDescription.countLabel(9_400_000L));
        assertEquals("10M", ModelDescription.countLabel(9_798_016L));
        assertEquals("596M", ModelDescription.countLabel(596_049_920L));
        assertEquals("2.0B", ModelDescription.countLabel(2_031_739_904L));
        assertEquals("15B", ModelDescription.countLabel(14_768_307_200L));
        assertEquals("1.5K", ModelDescription.countLabel(1_500L));
        assertEquals("1.2T", ModelDescription.countLabel(1_234_000_000_000L));
    }

    @Test
    void fileTypesHaveLlamaCppsNames() {
        assertEquals("all F32", ModelDescription.fileTypeName(0));
        assertEquals("Q8_0", ModelDescription.fileTypeName(7));
        assertEquals("Q4_K - Medium", ModelDescription.fileTypeName(15));
        assertEquals("IQ2_XXS - 2.0625 bpw", ModelDescription.fileTypeName(19));
        assertEquals("BF16", ModelDescription.fileTypeName(32));
        assertEquals("unknown, may not work", ModelDescription.fileTypeName(33));
        assertEquals("unknown, may not work", ModelDescription.fileTypeName(1L << 40));
    }

    /** Every format a GGUF tensor can have is guessed as its own file type, not as llama.cpp's "all F32" fallback. */
    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#weights")
    void everyGgufFormatIsGuessedAsItself(DType format) {
        long values = format.blockElements() * 4L;
        Path file = new GgufWriter()
                .tensor("a.weight", format, new long[] {values}, new byte[(int) format.rowBytes(values)])
                .write(dir.resolve(format + ".gguf"));
        try (GgufFile gguf = GgufFile.open(file)) {
            String guessed = ModelDescription.fileType(gguf);
            assertTrue(guessed.startsWith("(guessed) " + (format == DType.F32 ? "all F32" : format.name())), guessed);
        }
    }

    /** Without general.file_type llama.cpp guesses the "mostly" type of the type most tensors have. */
    @Test
    void aFileWithoutItsFileTypeGetsLlamaCppsGuess() {
        byte[] block = new byte[DType.Q4_K.blockBytes()];
        Path file = new GgufWriter()
                .tensor("a.weight", DType.F32, new long[] {4}, new byte[16])
                .tensor("b.weight", DType.Q4_K, new long[] {256}, block)
                .tensor("c.weight", DType.Q4_K, new long[] {256}, block)
                .write(dir.resolve("guess.gguf"));
        try (GgufFile gguf = GgufFile.open(file)) {
            assertEquals("(guessed) Q4_K - Medium", ModelDescription.fileType(gguf));
        }
        Path stated = new GgufWriter().u32(ModelDescription.FILE_TYPE, 18)
                .tensor("b.weight", DType.Q4_K, new long[] {256}, block)
                .write(dir.resolve("stated.gguf"));
        try (GgufFile gguf = GgufFile.open(stated)) {
            assertEquals("Q6_K", ModelDescription.fileType(gguf), "the file's own key wins");
        }
    }

    private static ModelConfig config(int layers, int hidden) {
        ModelConfig tiny = ModelConfig.read(Golden.modelDir("tiny-tied").resolve("config.json"));
        return new ModelConfig(tiny.architecture(), hidden, layers, tiny.numAttentionHeads(), tiny.numKeyValueHeads(),
                tiny.headDim(), java.util.Collections.nCopies(layers, tiny.feedForward(0)), tiny.vocabSize(), tiny.rmsNormEps(), tiny.ropeTheta(),
                tiny.ropeScaling(), tiny.maxPositionEmbeddings(), tiny.tieWordEmbeddings(), tiny.bosTokenId(),
                tiny.eosTokenIds(), tiny.torchDtype());
    }
}
