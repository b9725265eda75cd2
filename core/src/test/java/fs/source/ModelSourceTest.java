package fs.source;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.chat.ChatMessage;
import fs.chat.ChatTemplate;
import fs.gguf.GgufFile;
import fs.gguf.QTied;
import fs.model.GenerationConfig;
import fs.model.GgufConfigReader;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.TensorNaming;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelSourceTest {
    @TempDir
    Path dir;

    @Test
    void aGgufFileGivesConfigTensorsTokenizerAndTemplate() {
        try (ModelSource source = ModelSource.open(QTied.gguf("BF16"))) {
            assertInstanceOf(GgufSource.class, source);
            assertEquals(QTied.gguf("BF16"), source.path());
            ModelConfig config = source.config();
            try (GgufFile file = GgufFile.open(QTied.gguf("BF16"))) {
                assertEquals(GgufConfigReader.read(file), config);
            }
            // Hugging Face's sampling defaults; generation ends at <|endoftext|> and <|im_end|>, as Qwen3's does.
            GenerationConfig defaults = GenerationConfig.defaults();
            assertEquals(new GenerationConfig(defaults.doSample(), defaults.temperature(), defaults.topK(),
                    defaults.topP(), defaults.minP(), defaults.repetitionPenalty(), List.of(8000, 8002)),
                    source.generationConfig());

            assertEquals(TensorNaming.GGUF, source.tensors().names());
            assertEquals(24, source.tensors().tensors().size());
            Tensor embedding = source.tensors().find("token_embd.weight").orElseThrow();
            assertEquals(DType.BF16, embedding.dtype());
            assertArrayEquals(new long[] {8064, 256}, embedding.shape());
            assertEquals(DType.F32, source.tensors().find("blk.1.attn_k_norm.weight").orElseThrow().dtype());

            ModelWeights weights = ModelWeights.bind(config, source.tensors());
            assertSame(embedding, weights.embedTokens());
            assertSame(embedding, weights.lmHead(), "no output.weight: tied");
            assertSame(source.tensors().find("blk.1.ffn_down.weight").orElseThrow(), ((ModelWeights.Dense) weights.layers().get(1).feedForward()).down());
            assertEquals(List.of(), weights.notes());

            // The same tokenizer and template as the Hugging Face files the GGUF was made from.
            String text = "Hello, world! <think>ünïcödé</think> 12345";
            assertArrayEquals(ModelSource.readTokenizer(QTied.dir()).encode(text), source.tokenizer().encode(text));
            List<ChatMessage> chat = List.of(new ChatMessage("system", "Be brief."), new ChatMessage("user", "Hi"));
            assertEquals(ChatTemplate.load(QTied.dir()).render(chat, true, false),
                    source.chatTemplate().render(chat, true, false));
        }
        assertArrayEquals(ModelSource.readTokenizer(QTied.dir()).encode("tokens only"),
                ModelSource.readTokenizer(QTied.gguf("BF16")).encode("tokens only"));
    }

    @Test
    void aDirectoryIsAHuggingFaceModel() {
        Path tiny = Path.of(System.getProperty("fs.repo"), "models", "tiny-tied");
        try (ModelSource source = ModelSource.open(tiny)) {
            assertInstanceOf(HuggingFaceSource.class, source);
            assertEquals(ModelConfig.read(tiny.resolve("config.json")), source.config());
            assertEquals(TensorNaming.HUGGING_FACE, source.tensors().names());
            assertTrue(source.tensors().find("model.embed_tokens.weight").isPresent());
            assertEquals(GenerationConfig.read(tiny, source.config().vocabSize()), source.generationConfig());
        }
    }

    @Test
    void quantizedTensorsKeepTheirFormatAndBind() {
        try (ModelSource source = ModelSource.open(QTied.gguf("Q8_0"))) {
            List<Tensor> quantized = source.tensors().tensors().stream().filter(t -> t.dtype() == DType.Q8_0).toList();
            assertEquals(15, quantized.size(), "every matrix; the norms are F32");
            Tensor embedding = source.tensors().find("token_embd.weight").orElseThrow();
            assertEquals(DType.Q8_0, embedding.dtype());
            assertArrayEquals(new long[] {8064, 256}, embedding.shape());
            assertEquals(8064 * DType.Q8_0.rowBytes(256), embedding.byteSize());
            ModelWeights weights = ModelWeights.bind(source.config(), source.tensors());
            assertSame(embedding, weights.embedTokens());
        }
    }

    @Test
    void aGgufWithAnotherOrNoChatTemplateIsRefusedWhenTheTemplateIsAskedFor() throws IOException {
        Path copy = Files.copy(QTied.gguf("BF16"), dir.resolve("model.gguf"));
        byte[] bytes = Files.readAllBytes(copy);
        String key = "tokenizer.chat_template";
        int at = indexOf(bytes, key.getBytes());
        bytes[at + key.length() - 1] = 'X'; // the key is now tokenizer.chat_templatX
        Files.write(copy, bytes);
        try (ModelSource source = ModelSource.open(copy)) {
            FsException e = assertThrows(FsException.class, source::chatTemplate);
            assertEquals(copy + ": no chat template (the file has no tokenizer.chat_template)", e.getMessage());
        }
        FsException other = assertThrows(FsException.class, () -> ChatTemplate.of("{{ messages }}", "somewhere"));
        assertTrue(other.getMessage().startsWith("unsupported chat template in somewhere (sha256 "), other.getMessage());
    }

    @Test
    void aGgufFileWrittenToAfterOpeningIsReportedChanged() throws IOException {
        Path copy = Files.copy(QTied.gguf("BF16"), dir.resolve("model.gguf"));
        try (ModelSource source = ModelSource.open(copy)) {
            assertEquals(java.util.Optional.empty(), source.changedFile());
            Files.write(copy, new byte[] {0}, StandardOpenOption.APPEND);
            assertEquals(java.util.Optional.of(copy), source.changedFile());
        }
    }

    @Test
    void whatIsNoGgufFileIsOneLine() throws IOException {
        Path notGguf = Files.writeString(dir.resolve("model.gguf"), "not a model");
        FsException e = assertThrows(FsException.class, () -> ModelSource.open(notGguf));
        assertEquals(notGguf + ": not a GGUF file (it does not start with the bytes 'GGUF')", e.getMessage());
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) if (haystack[i + j] != needle[j]) continue outer;
            return i;
        }
        throw new AssertionError("not found");
    }
}
