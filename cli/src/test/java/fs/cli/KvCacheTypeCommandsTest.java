package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.api.FsModel;
import fs.model.Golden;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The KV cache types other than f32 running on the CPU backend through the commands: the f16 default and the types
 * named with -ctk and -ctv reach the cache, which the load line and bench's columns say. These need the CPU backend's
 * f16 and bf16 caches; {@link KvCacheTypeFlagsTest} has what runs on float32 caches alone.
 */
class KvCacheTypeCommandsTest {
    private static final String MODEL = Golden.modelDir("tiny-tied").toString();

    private static String loadLine(String err) {
        return err.lines().filter(line -> line.contains(" layers, context ")).findFirst().orElse(err);
    }

    /** tiny-tied: 2 layers × 2 kv heads × (16 + 16) halves. */
    @Test
    void theCpuCacheIsF16ByDefaultAsLlamaCpps() {
        CliRun run = CliRun.of("run", MODEL, "-p", "Hello", "-n", "2", "-t", "1", "--backend", "cpu", "--ctx", "16");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(loadLine(run.err()).contains(", KV cache f16, 256 B per position (4.0 KiB at --ctx 16) ("),
                run.err());
    }

    @Test
    void eachNamedTypeReachesTheCache() {
        CliRun run = CliRun.of("run", MODEL, "-p", "Hello", "-n", "2", "-t", "1", "--backend", "cpu", "-ctv", "bf16");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(loadLine(run.err()).contains(", KV cache k f16, v bf16, "), run.err());
        CliRun mixed = CliRun.of("run", MODEL, "-p", "Hello", "-n", "2", "-t", "1", "--backend", "java", "-ctk", "f16");
        assertEquals(0, mixed.exitCode(), mixed.err());
        assertTrue(loadLine(mixed.err()).contains(", KV cache k f16, v f32, "), mixed.err());
    }

    /** llama-bench's lists: every test on each key type with each value type, in that order. */
    @Test
    void benchRunsItsTestsOnEachTypeListed() throws IOException {
        CliRun run = CliRun.of("bench", MODEL, "-p", "4", "-n", "2", "-r", "1",
                "--warmup", "0", "-t", "1", "--backend", "cpu",
                "-ctk", "f32,f16", "--json");
        assertEquals(0, run.exitCode(), run.err());
        JsonNode tests = new ObjectMapper().readTree(run.out());
        assertEquals(4, tests.size(), run.out());
        List<String> typeK = List.of("f32", "f32", "f16", "f16");
        for (int i = 0; i < typeK.size(); i++) {
            assertEquals(typeK.get(i), tests.get(i).get("type_k").textValue(), run.out());
            assertEquals("f16", tests.get(i).get("type_v").textValue(), run.out());
            assertEquals(i % 2 == 0 ? 4 : 0, tests.get(i).get("n_prompt").intValue(), run.out());
        }
        CliRun table = CliRun.of("bench", MODEL, "-p", "4", "-n", "0", "-r", "1",
                "--warmup", "0", "-t", "1", "--backend", "cpu",
                "-ctv", "f16,bf16");
        assertEquals(0, table.exitCode(), table.err());
        String[] lines = table.out().strip().split("\n");
        assertEquals(4, lines.length, table.out());
        assertTrue(lines[2].contains("| f16    | f16    |"), lines[2]);
        assertTrue(lines[3].contains("| f16    | bf16   |"), lines[3]);
    }

    @Test
    void serveAnswersFromACacheOfTheNamedTypes() throws Exception {
        try (LiveServe live = new LiveServe(MODEL, "--port", "0", "-t", "1", "--backend", "cpu", "--ctx", "64",
                "-ctk", "bf16")) {
            assertTrue(loadLine(live.log()).contains(", KV cache k bf16, v f16, "), live.log());
            HttpResponse<String> response =
                    live.post("/v1/completions", "{\"prompt\":\"Hello\",\"max_tokens\":4,\"temperature\":0}");
            assertEquals(200, response.statusCode(), response.body());
        }
    }

    @Test
    void theLibrarysCacheIsF16ByDefaultOnTheCpu() {
        FsModel.Options cpu = FsModel.Options.defaults().withBackend("cpu").withThreads(1).withContextLength(64);
        try (FsModel model = FsModel.load(MODEL, cpu)) {
            assertEquals("f16", model.cacheTypes());
        }
        try (FsModel model = FsModel.load(MODEL, cpu.withCacheTypeK("bf16"))) {
            assertEquals("k bf16, v f16", model.cacheTypes());
        }
    }
}
