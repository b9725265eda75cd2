package fs.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.gguf.QTied;
import fs.quantize.ImportanceMatrix;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Every command that takes MODEL, on a GGUF file (q-tied's, as llama.cpp wrote it). */
class GgufModelCommandsTest {
    private static final String BF16 = QTied.gguf("BF16").toString();
    private static final String Q8_0 = QTied.gguf("Q8_0").toString();

    private static JsonNode golden() throws IOException {
        return new ObjectMapper().readTree(QTied.dir().resolve("golden-BF16.json").toFile());
    }

    private static int[] ints(JsonNode array) {
        return array.valueStream().mapToInt(JsonNode::intValue).toArray();
    }

    @Test
    void runAndLogitsComputeWhatTheFileSays() throws IOException {
        JsonNode golden = golden();
        String tokens = CliRun.ids(ints(golden.get("tokens")));
        CliRun run = CliRun.of("run", BF16, "--tokens", tokens, "-n", "8", "--temp", "0", "--print-ids", "-t", "2",
                "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        assertEquals(Arrays.toString(ints(golden.get("greedy"))).replaceAll("[\\[\\],]", ""), run.out().strip());
        assertTrue(run.err().contains("fs: " + BF16 + ": 2 layers, context 4096"), run.err());

        // Top ids of the golden (float64) at every position: near ties need the exact float32 cache.
        CliRun logits = CliRun.of("logits", BF16, "--tokens", tokens, "--top", "5", "-t", "2", "--backend", "cpu",
                "-ctk", "f32", "-ctv", "f32");
        assertEquals(0, logits.exitCode(), logits.err());
        JsonNode positions = new ObjectMapper().readTree(logits.out()).get("positions");
        for (int p = 0; p < positions.size(); p++) {
            assertArrayEquals(ints(golden.get("positions").get(p).get("top_ids")), ints(positions.get(p).get("top_ids")),
                    "position " + p);
        }
    }

    @Test
    void aPromptGoesThroughTheFilesTokenizerAndChatTemplate() {
        CliRun run = CliRun.of("run", BF16, "-p", "Why is the sky blue?", "-n", "3", "--temp", "0", "-t", "2",
                "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        CliRun same = CliRun.of("run", BF16, "-p", "Why is the sky blue?", "-n", "3", "--temp", "0", "-t", "2",
                "--backend", "cpu");
        assertEquals(run.out(), same.out());
        // The prompt's token count: the chat template rendered and tokenized as from the Hugging Face files.
        CliRun ids = CliRun.of("tokenize", QTied.dir().toString(),
                "<|im_start|>user\nWhy is the sky blue?<|im_end|>\n<|im_start|>assistant\n");
        int promptTokens = ids.out().strip().split(" ").length;
        assertTrue(run.err().contains("prompt:     " + promptTokens + " tokens"), run.err());
    }

    @Test
    void chatTalksThroughTheFilesTemplate() {
        InputStream original = System.in;
        System.setIn(new ByteArrayInputStream("Hello\nHello again\n".getBytes(StandardCharsets.UTF_8)));
        CliRun chat;
        try {
            chat = CliRun.of("chat", BF16, "-n", "4", "--temp", "0", "-t", "2", "--backend", "cpu");
        } finally {
            System.setIn(original);
        }
        assertEquals(0, chat.exitCode(), chat.err());
        // The first answer is the greedy continuation of the template's prompt for "Hello", as run gives it.
        CliRun run = CliRun.of("run", BF16, "-p", "Hello", "-n", "4", "--temp", "0", "-t", "2", "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(chat.out().startsWith(run.out()) && chat.out().length() > run.out().length(),
                "chat:\n" + chat.out() + "\nrun:\n" + run.out());
    }

    @Test
    void tokenizeAndDetokenizeReadTheFilesTokenizer() {
        String text = "Hello, world! <think>naïve café</think> 2026";
        CliRun fromGguf = CliRun.of("tokenize", BF16, text);
        CliRun fromJson = CliRun.of("tokenize", QTied.dir().toString(), text);
        assertEquals(0, fromGguf.exitCode(), fromGguf.err());
        assertEquals(fromJson.out(), fromGguf.out());
        String[] ids = fromGguf.out().strip().split(" ");
        String[] args = new String[ids.length + 2];
        args[0] = "detokenize";
        args[1] = BF16;
        System.arraycopy(ids, 0, args, 2, ids.length);
        CliRun back = CliRun.of(args);
        assertEquals(0, back.exitCode(), back.err());
        assertEquals(text, back.out().strip());
    }

    @Test
    void inspectSummarizesTheMetadataAndListsEveryTensorsType() {
        CliRun inspect = CliRun.of("inspect", BF16);
        assertEquals(0, inspect.exitCode(), inspect.err());
        String out = inspect.out();
        assertTrue(out.contains("format         GGUF v3, alignment 32, 22 metadata keys\n"), out);
        assertTrue(out.contains("vocab          8064\n"), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("'tokenizer\\.ggml\\.tokens' +array +8064 × string: '!', '\"',"
                + " '#', …")), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("'qwen3\\.block_count' +uint32 +2")), out);
        assertTrue(out.lines().anyMatch(l -> l.startsWith("'tokenizer.chat_template'") && l.endsWith("(4116 characters)")),
                out);
        assertFalse(out.contains("'$'"), "the token list is summarized, not dumped");
        assertTrue(out.lines().anyMatch(l -> l.matches("token_embd\\.weight +BF16 +\\[8064, 256] +4128768 +16\\.00")), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("blk\\.1\\.attn_q_norm\\.weight +F32 +\\[128] +512 +32\\.00")), out);
        assertTrue(out.contains("file type      BF16\n"), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("'general\\.file_type' +uint32 +32 \\(BF16\\)")), out);
        assertTrue(out.contains("total          24 tensors, 4,032,256 parameters (4.0 M), 8,068,096 bytes (7.7 MiB),"
                + " 16.01 bits per weight\n"), out);
        assertTrue(out.contains("weights        ok"), out);
    }

    @Test
    void aQuantizedFileIsInspectedAndRunsTheSameOnTheCpuAndOnOpenCl() throws IOException {
        CliRun inspect = CliRun.of("inspect", Q8_0, "--json");
        assertEquals(0, inspect.exitCode(), inspect.err());
        JsonNode root = new ObjectMapper().readTree(inspect.out());
        assertEquals("gguf", root.get("format").textValue());
        assertEquals(8064, root.get("gguf").get("metadata").get("tokenizer.ggml.tokens").get("length").intValue());
        assertEquals("string", root.get("gguf").get("metadata").get("tokenizer.ggml.tokens").get("element_type").textValue());
        assertEquals("qwen3", root.get("gguf").get("metadata").get("general.architecture").get("value").textValue());
        JsonNode fileType = root.get("gguf").get("metadata").get("general.file_type");
        assertEquals(7, fileType.get("value").intValue());
        assertEquals("Q8_0", fileType.get("name").textValue(), "llama.cpp's name for file type 7");
        JsonNode embedding = root.get("tensors").valueStream()
                .filter(t -> t.get("name").textValue().equals("token_embd.weight")).findFirst().orElseThrow();
        assertEquals("Q8_0", embedding.get("type").textValue());
        assertEquals(8.5, embedding.get("bits_per_weight").doubleValue(), 1e-12);
        assertEquals(8064L * 256 / 32 * 34, embedding.get("bytes").longValue());
        assertTrue(root.get("weights").get("ok").booleanValue(), inspect.out());

        CliRun run = CliRun.of("run", Q8_0, "--tokens", "1,2", "-n", "2", "--temp", "0", "--backend", "cpu",
                "--print-ids");
        assertEquals(0, run.exitCode(), run.err());
        assertEquals(2, run.out().strip().split(" ").length, run.out());

        CliRun openCl = CliRun.of("run", Q8_0, "--tokens", "1,2", "-n", "2", "--temp", "0", "--backend", "opencl",
                "--print-ids");
        assertEquals(0, openCl.exitCode(), openCl.err());
        assertEquals(run.out().strip(), openCl.out().strip()); // greedy: the same two tokens
    }

    /** A K-quant file's type by llama_ftype_name, with the size in a unit that reads (2.7 MiB, not 0.00 GiB). */
    @Test
    void inspectNamesTheFileType() {
        CliRun inspect = CliRun.of("inspect", QTied.gguf("Q4_K_M").toString());
        assertEquals(0, inspect.exitCode(), inspect.err());
        String out = inspect.out();
        assertTrue(out.contains("file type      Q4_K - Medium\n"), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("'general\\.file_type' +uint32 +15 \\(Q4_K - Medium\\)")), out);
        assertTrue(out.contains("2,874,112 bytes (2.7 MiB), 5.70 bits per weight\n"), out);
    }

    /**
     * llama-imatrix's layout (general.type 'imatrix', NAME.in_sum2 and NAME.counts per matrix) is an importance
     * matrix, summarized with its entries, chunks and dataset, not a model refused for want of an architecture.
     */
    @Test
    void inspectSummarizesAnImportanceMatrix() throws IOException {
        String file = QTied.dir().resolve("imatrix.gguf").toString();
        ImportanceMatrix matrix = ImportanceMatrix.read(QTied.dir().resolve("imatrix.gguf"));
        CliRun inspect = CliRun.of("inspect", file);
        assertEquals(0, inspect.exitCode(), inspect.err());
        assertEquals("", inspect.err());
        String out = inspect.out();
        assertTrue(out.contains("type           importance matrix (general.type 'imatrix')"), out);
        assertTrue(out.contains("entries        14 matrices"), out);
        assertTrue(out.contains("chunks         " + matrix.chunkCount() + " of " + matrix.chunkSize() + " tokens\n"),
                out);
        assertTrue(out.contains("datasets       '" + matrix.datasets().getFirst() + "'\n"), out);
        long count = matrix.tensors().get("blk.1.ffn_down.weight").count();
        assertTrue(out.lines().anyMatch(l -> l.matches("blk\\.1\\.ffn_down\\.weight +768 +" + count)), out);

        CliRun json = CliRun.of("inspect", file, "--json");
        assertEquals(0, json.exitCode(), json.err());
        JsonNode root = new ObjectMapper().readTree(json.out());
        assertEquals("imatrix", root.get("type").textValue());
        assertEquals(14, root.get("imatrix").get("entries").intValue());
        assertEquals(matrix.chunkCount(), root.get("imatrix").get("chunk_count").intValue());
        assertEquals(matrix.datasets().getFirst(), root.get("imatrix").get("datasets").get(0).textValue());
        assertEquals(14, root.get("imatrix").get("matrices").size());
    }

    @Test
    void benchAndVerifyRunOnAGgufFile() throws IOException {
        CliRun bench = CliRun.of("bench", BF16, "-p", "4", "-n", "2", "-r", "1",
                "--warmup", "0", "-t", "2", "--backend", "cpu", "--json");
        assertEquals(0, bench.exitCode(), bench.err());
        JsonNode test = new ObjectMapper().readTree(bench.out()).get(0);
        assertEquals(BF16, test.get("model_filename").textValue());
        assertEquals(Files.size(QTied.gguf("BF16")) > test.get("model_size").longValue(), true);
        assertEquals(4_032_256, test.get("model_n_params").longValue());

        CliRun verify = CliRun.of("verify", BF16, "--tokens", "1,2,3,4", "-t", "2");
        assertEquals(0, verify.exitCode(), verify.out() + verify.err());
    }
}
