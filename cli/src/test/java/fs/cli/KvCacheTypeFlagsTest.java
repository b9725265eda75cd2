package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.engine.Engine;
import fs.model.Golden;
import fs.model.ModelConfig;
import fs.source.ModelSource;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * -ctk/--cache-type-k and -ctv/--cache-type-v, as llama.cpp spells them, on every command that runs a model: the
 * values they take, their refusals in one line, and where the types show (the load line, bench's type_k and type_v).
 * Everything here runs on float32 caches, which every backend has; what needs the others is
 * {@link KvCacheTypeCommandsTest}.
 */
class KvCacheTypeFlagsTest {
    private static final String MODEL = Golden.modelDir("tiny-tied").toString();

    @TempDir
    static Path texts;

    private static ModelConfig config() {
        try (ModelSource source = Engine.open(MODEL, new PrintWriter(Writer.nullWriter()))) {
            return source.config();
        }
    }

    /** {@code command} on tiny-tied with arguments that make it load the model and do the least it can. */
    private static CliRun loading(String command, String... flags) throws IOException {
        List<String> args = new ArrayList<>(List.of(command, MODEL, "-t", "1"));
        args.addAll(switch (command) {
            case "run" -> List.of("-p", "Hello", "-n", "1");
            case "bench" -> List.of("-p", "4", "-n", "0", "-r", "1", "--warmup", "0");
            case "logits" -> List.of("-p", "Hello", "--top", "1");
            case "perplexity" -> List.of("-c", "16", "-f", Files.writeString(texts.resolve("text.txt"),
                    "The quick brown fox jumps over the lazy dog. ".repeat(8)).toString());
            case "serve" -> List.of("--port", "0");
            default -> throw new IllegalArgumentException(command);
        });
        args.addAll(List.of(flags));
        return CliRun.of(args.toArray(String[]::new));
    }

    private static String lastLine(CliRun run) {
        return run.err().strip().lines().reduce((a, b) -> b).orElse("");
    }

    private static String loadLine(CliRun run) {
        return run.err().lines().filter(line -> line.contains(" layers, context ")).findFirst().orElse(run.err());
    }

    @ParameterizedTest
    @ValueSource(strings = {"run", "chat", "serve", "bench", "perplexity", "logits"})
    void anUnknownTypeIsOneLineListingTheTypes(String command) {
        for (String flag : List.of("-ctk", "--cache-type-v")) {
            CliRun run = CliRun.of(command, MODEL, flag, "q4_0");
            assertEquals(2, run.exitCode(), run.err());
            String name = flag.equals("-ctk") ? "-ctk/--cache-type-k" : "-ctv/--cache-type-v";
            assertEquals("fs: invalid value for " + name + ": unknown KV cache type 'q4_0': use one of f32, f16, "
                    + "bf16, q8_0 (see 'fs " + command + " --help')", run.err().strip());
        }
    }

    @Test
    void theTypesAreReadWhateverTheirCase() throws IOException {
        CliRun run = loading("run", "--backend", "java", "-ctk", "F32", "--cache-type-v", "F32");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(loadLine(run).contains(", KV cache f32, "), run.err());
    }

    @Test
    void aCommaListIsFsBenchsAlone() throws IOException {
        CliRun run = loading("run", "-ctk", "f32,f16");
        assertEquals(2, run.exitCode(), run.err());
        assertEquals("fs: -ctk takes one type here; a comma list is fs bench's (see 'fs run --help')",
                run.err().strip());
    }

    /** tiny-tied's heads are 16 wide: half a q8_0 block. Refused before the weights are uploaded. */
    @ParameterizedTest
    @ValueSource(strings = {"run", "serve", "bench", "perplexity", "logits"})
    void aQ8CacheOnHeadsThatAreNotWholeBlocksIsOneLine(String command) throws IOException {
        assertEquals(16, config().headDim());
        for (String flag : List.of("-ctk", "-ctv")) {
            CliRun run = loading(command, "--backend", "cpu", flag, "q8_0");
            assertEquals(1, run.exitCode(), run.err());
            assertEquals("fs: a q8_0 KV cache needs a head dimension that is a multiple of 32; this model's is 16 "
                    + "(use f32, f16 or bf16)", lastLine(run));
            assertFalse(run.err().contains("\tat "), run.err());
            assertFalse(run.err().contains(" layers, context "), "refused before the load: " + run.err());
        }
    }

    /** --backend java is the exact path: its cache is float32 unless a type is named. */
    @Test
    void theLoadLineSaysTheTypesAndTheirBytesPerPosition() throws IOException {
        ModelConfig config = config();
        long perPosition = (long) config.numHiddenLayers() * config.numKeyValueHeads()
                * (KvCacheType.F32.rowBytes(config.headDim()) + KvCacheType.F32.rowBytes(config.headDim()));
        assertEquals(2 * 2 * (64 + 64), perPosition); // tiny-tied: 2 layers, 2 kv heads of 16 floats
        CliRun run = loading("run", "--backend", "java", "--ctx", "16");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(loadLine(run).contains(", context 16, on "), run.err());
        assertTrue(loadLine(run).contains(", KV cache f32, 512 B per position (8.0 KiB at --ctx 16) ("), run.err());
        CliRun named = loading("run", "--backend", "cpu", "-ctk", "f32", "-ctv", "f32", "--ctx", "16");
        assertEquals(0, named.exitCode(), named.err());
        assertTrue(loadLine(named).contains(", KV cache f32, 512 B per position (8.0 KiB at --ctx 16) ("),
                named.err());
    }

    /** The figures at a real model's size: Qwen3-8B's 36 layers of 8 kv heads of 128. */
    @Test
    void theCacheSizeIsPerPositionAndAtTheContext() {
        KvCacheTypes f16 = KvCacheTypes.F16;
        assertEquals("KV cache f16, 144 KiB per position (4.50 GiB at --ctx 32768)",
                ModelOptions.cacheSize(f16, f16.bytesPerPosition(36, 8, 128), 32768));
        KvCacheTypes mixed = new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.F16);
        // a q8_0 row of 128 is 4 blocks of 34 bytes
        assertEquals(36 * 8 * (4 * 34 + 128 * 2), mixed.bytesPerPosition(36, 8, 128));
        assertEquals("KV cache k q8_0, v f16, 110 KiB per position (3.45 GiB at --ctx 32768)",
                ModelOptions.cacheSize(mixed, mixed.bytesPerPosition(36, 8, 128), 32768));
    }

    @Test
    void benchSaysTheTypesInItsTableAndJson() throws IOException {
        CliRun json = CliRun.of("bench", MODEL, "-p", "4", "-n", "2", "-r", "1",
                "--warmup", "0", "-t", "1", "--backend", "cpu",
                "-ctk", "f32", "-ctv", "f32", "--json");
        assertEquals(0, json.exitCode(), json.err());
        JsonNode tests = new ObjectMapper().readTree(json.out());
        assertEquals(2, tests.size(), json.out());
        for (JsonNode test : tests) {
            assertEquals("f32", test.get("type_k").textValue(), json.out());
            assertEquals("f32", test.get("type_v").textValue(), json.out());
        }
        CliRun table = CliRun.of("bench", MODEL, "-p", "4", "-n", "0", "-r", "1",
                "--warmup", "0", "-t", "1", "--backend", "java");
        assertEquals(0, table.exitCode(), table.err());
        String[] lines = table.out().strip().split("\n");
        assertEquals(3, lines.length, table.out());
        assertTrue(lines[0].contains("| threads | type_k | type_v |          test |"), lines[0]);
        assertTrue(lines[2].contains("| f32    | f32    |           pp4 |"), lines[2]);
    }

    @Test
    void benchParallelSaysTheTypesToo() throws IOException {
        CliRun json = CliRun.of("bench", MODEL, "--parallel", "1", "-n", "2", "-r", "1",
                "--warmup", "0", "-t", "1", "--backend", "cpu",
                "-ctk", "f32", "-ctv", "f32", "--json");
        assertEquals(0, json.exitCode(), json.err());
        JsonNode test = new ObjectMapper().readTree(json.out()).get(0);
        assertEquals("f32", test.get("type_k").textValue(), json.out());
        assertEquals("f32", test.get("type_v").textValue(), json.out());
        CliRun table = CliRun.of("bench", MODEL, "--parallel", "1", "-n", "2", "-r", "1",
                "--warmup", "0", "-t", "1", "--backend",
                "java");
        assertEquals(0, table.exitCode(), table.err());
        String[] lines = table.out().strip().split("\n");
        assertTrue(lines[0].contains("| threads | type_k | type_v | streams |"), lines[0]);
        assertTrue(lines[2].contains("| f32    | f32    |       1 |"), lines[2]);
    }
}
