package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.source.ModelSource;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * fs inspect on a mixture of experts, and the line a loading MoE model says: q-moe (qwen3moe GGUF: 2 layers, 8 experts
 * of width 256, top 3, hidden 256, vocab 8064, tied) and tiny-moe (Hugging Face: 3 layers, 8 experts of 32, top 3,
 * layer 1 dense of 96).
 */
class MoeInspectCommandTest {
    private static final Path Q_MOE = Path.of(System.getProperty("fs.repo"), "models", "q-moe");
    private static final Path TINY_MOE = Path.of(System.getProperty("fs.repo"), "models", "tiny-moe");

    // q-moe: per layer attention 2·256·256 + 2·256·128 + 2·64 + 2·256, router 8·256, experts 8·3·256·256; the
    // embedding (tied: once) and the final norm. Active: 3 of the 8 experts.
    private static final long Q_MOE_TOTAL = 8064L * 256 + 256 + 2 * (196_608 + 640 + 2048 + 1_572_864);
    private static final long Q_MOE_ACTIVE = Q_MOE_TOTAL - 2 * 5 * 3 * 256 * 256;

    @Test
    void aGgufMixtureOfExpertsShowsItsExpertsAndItsActiveParameters() throws IOException {
        String model = Q_MOE.resolve("model-Q4_K_M.gguf").toString();
        CliRun text = CliRun.of("inspect", model);
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().contains("architecture   qwen3moe\n"), text.out());
        assertTrue(text.out().contains("experts        8 per layer, 3 used per token, each of width 256\n"), text.out());
        assertTrue(text.out().contains(String.format("parameters     %,d (5.6M), %,d (3.6M) active per token\n",
                Q_MOE_TOTAL, Q_MOE_ACTIVE)), text.out());
        assertTrue(text.out().contains(String.format("%,d parameters", Q_MOE_TOTAL)), "the stored tensors agree");

        CliRun json = CliRun.of("inspect", model, "--json");
        assertEquals(0, json.exitCode(), json.err());
        JsonNode root = new ObjectMapper().readTree(json.out());
        JsonNode config = root.get("config");
        assertEquals("Qwen3MoeForCausalLM", config.get("architecture").asText());
        assertEquals("qwen3_moe", config.get("model_type").asText());
        assertEquals(8, config.get("num_experts").asInt());
        assertEquals(3, config.get("num_experts_per_tok").asInt());
        assertEquals(256, config.get("moe_intermediate_size").asInt());
        assertTrue(config.get("norm_topk_prob").asBoolean());
        assertEquals(0, config.get("dense_layers").size());
        assertEquals(Q_MOE_TOTAL, root.get("parameters").get("total").asLong());
        assertEquals(Q_MOE_ACTIVE, root.get("parameters").get("active_per_token").asLong());
        assertEquals(Q_MOE_TOTAL, root.get("totals").get("parameters").asLong());
    }

    @Test
    void aHuggingFaceMixtureOfExpertsShowsItsDenseLayers() throws IOException {
        CliRun text = CliRun.of("inspect", TINY_MOE.toString());
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().contains("architecture   Qwen3MoeForCausalLM (qwen3_moe)\n"), text.out());
        assertTrue(text.out().contains("experts        8 per layer, 3 used per token, each of width 32\n"), text.out());
        assertTrue(text.out().contains("dense layers   [1] (a dense feed-forward of width 96)\n"), text.out());
        JsonNode root = new ObjectMapper().readTree(CliRun.of("inspect", TINY_MOE.toString(), "--json").out());
        assertEquals("[1]", root.get("config").get("dense_layers").toString());
        long total = root.get("parameters").get("total").asLong();
        assertEquals(root.get("totals").get("parameters").asLong(), total, "tied, no lm_head stored: the same count");
        // two sparse layers leave 5 of 8 experts (3 matrices of 64 × 32) out
        assertEquals(total - 2 * 5 * 3 * 64 * 32, root.get("parameters").get("active_per_token").asLong());
    }

    /** A dense model's JSON counts every weight active. */
    @Test
    void aDenseModelIsAllActive() throws IOException {
        Path tinyTied = Path.of(System.getProperty("fs.repo"), "models", "tiny-tied");
        JsonNode root = new ObjectMapper().readTree(CliRun.of("inspect", tinyTied.toString(), "--json").out());
        assertEquals("Qwen3ForCausalLM", root.get("config").get("architecture").asText());
        assertEquals(root.get("totals").get("parameters").asLong(), root.get("parameters").get("total").asLong());
        assertEquals(root.get("parameters").get("total").asLong(),
                root.get("parameters").get("active_per_token").asLong());
        assertTrue(root.get("config").get("num_experts") == null);
    }

    /** Loading an MoE model says what it is in one line: its parameters, those a token reads, the bytes mapped. */
    @Test
    void loadingAMixtureOfExpertsSaysItsSizeInOneLine() {
        CliRun run = CliRun.of("logits", Q_MOE.resolve("model-BF16.gguf").toString(), "--tokens", "1,2,3", "--top",
                "2", "-t", "2", "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        // BF16 matrices, F32 norms and router: 2 bytes a weight but 4 for the vectors and routers
        long vectors = 256 + 2 * (2 * 64 + 2 * 256 + 8 * 256);
        long bytes = 2 * (Q_MOE_TOTAL - vectors) + 4 * vectors;
        assertTrue(run.err().contains("fs: Qwen3-MoE, 5.6M parameters (3.6M active per token), "
                + fs.HumanSize.of(bytes) + " of weights mapped\n"), run.err());
        CliRun dense = CliRun.of("logits", Path.of(System.getProperty("fs.repo"), "models", "tiny-tied").toString(),
                "--tokens", "1,2,3", "--top", "2", "-t", "2", "--backend", "cpu");
        assertTrue(!dense.err().contains("active per token"), "a dense model says nothing of the kind");
    }

    /** llama-bench's model column: qwen3moe and the parameter count (llama.cpp names only 30B.A3B and 235B.A22B). */
    @Test
    void theModelDescriptionNamesTheArchitecture() {
        try (ModelSource source = ModelSource.open(Q_MOE.resolve("model-Q4_K_M.gguf"))) {
            assertEquals("qwen3moe 5.6M Q4_K - Medium", ModelDescription.of(source));
        }
    }
}
