package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.model.TinyQwen3;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InspectCommandTest {
    @TempDir
    Path dir;

    private record Result(int exit, String out, String err) {}

    private static Result fs(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Result(exit, out.toString(), err.toString());
    }

    /** Parameters and bytes of the tiny tied model, counted from its shapes rather than by the code under test. */
    private static long[] expectedTotals() {
        long parameters = 0;
        for (var entry : TinyQwen3.shapes().entrySet()) {
            if (entry.getKey().equals("lm_head.weight")) continue;
            long count = 1;
            for (long dim : entry.getValue()) count *= dim;
            parameters += count;
        }
        return new long[] {parameters, parameters * 2};
    }

    @Test
    void printsTheConfigEveryTensorAndTotals() {
        Path model = TinyQwen3.writeTied(dir.resolve("tiny"));
        Result result = fs("inspect", model.toString());
        assertEquals(0, result.exit(), result.err());
        assertEquals("", result.err());
        String out = result.out();
        for (String line : List.of("layers         2", "hidden         16", "heads          4 query / 2 kv",
                "head_dim       8", "intermediate   24", "vocab          40", "rope theta     1000000",
                "rms eps        0.000001", "tied           yes", "dtype          bfloat16", "bos / eos      1 / [2, 3]")) {
            assertTrue(out.contains(line + "\n"), "'" + line + "' in:\n" + out);
        }
        for (var entry : TinyQwen3.shapes().entrySet()) {
            if (entry.getKey().equals("lm_head.weight")) continue;
            String shape = Arrays.toString(entry.getValue());
            assertTrue(out.lines().anyMatch(l -> l.startsWith(entry.getKey() + " ") && l.contains(" BF16 ")
                    && l.contains(shape) && l.endsWith("model.safetensors")), entry.getKey() + " listed in:\n" + out);
        }
        long[] totals = expectedTotals();
        assertTrue(out.contains(String.format(Locale.ROOT, "%,d parameters", totals[0])), out);
        assertTrue(out.contains(String.format(Locale.ROOT, "%,d bytes", totals[1])), out);
        assertTrue(out.contains("weights        ok"), out);
    }

    @Test
    void printsOneJsonObjectWithConfigTensorsAndTotals() throws IOException {
        Path model = TinyQwen3.writeTied(dir.resolve("tiny"));
        Result result = fs("inspect", model.toString(), "--json");
        assertEquals(0, result.exit(), result.err());
        JsonNode root = new ObjectMapper().readTree(result.out());

        JsonNode config = root.get("config");
        assertEquals(2, config.get("num_hidden_layers").intValue());
        assertEquals(16, config.get("hidden_size").intValue());
        assertEquals(2, config.get("num_key_value_heads").intValue());
        assertEquals(8, config.get("head_dim").intValue());
        assertEquals(1e6, config.get("rope_theta").doubleValue());
        assertTrue(config.get("tie_word_embeddings").booleanValue());
        assertEquals(3, config.get("eos_token_id").get(1).intValue());

        Map<String, long[]> expected = TinyQwen3.shapes();
        expected.remove("lm_head.weight");
        Map<String, long[]> listed = new HashMap<>();
        for (JsonNode tensor : root.get("tensors")) {
            List<Long> shape = new ArrayList<>();
            tensor.get("shape").forEach(d -> shape.add(d.longValue()));
            long[] dims = shape.stream().mapToLong(Long::longValue).toArray();
            listed.put(tensor.get("name").textValue(), dims);
            assertEquals("BF16", tensor.get("dtype").textValue());
            assertEquals("model.safetensors", tensor.get("file").textValue());
            long count = 1;
            for (long dim : dims) count *= dim;
            assertEquals(count * 2, tensor.get("bytes").longValue(), tensor.get("name").textValue());
        }
        assertEquals(expected.keySet(), listed.keySet());
        for (var entry : expected.entrySet()) {
            assertEquals(Arrays.toString(entry.getValue()), Arrays.toString(listed.get(entry.getKey())));
        }

        long[] totals = expectedTotals();
        assertEquals(expected.size(), root.get("totals").get("tensors").intValue());
        assertEquals(totals[0], root.get("totals").get("parameters").longValue());
        assertEquals(totals[1], root.get("totals").get("bytes").longValue());
        assertTrue(root.get("weights").get("ok").booleanValue());
    }

    @Test
    void listsWeightProblemsThenExitsOne() throws IOException {
        Map<String, long[]> shapes = TinyQwen3.shapes();
        shapes.remove("model.norm.weight");
        Path model = TinyQwen3.write(dir.resolve("broken"), false, shapes);
        Result result = fs("inspect", model.toString(), "--json");
        assertEquals(1, result.exit(), result.err());
        assertEquals("", result.err());
        JsonNode weights = new ObjectMapper().readTree(result.out()).get("weights");
        assertEquals(false, weights.get("ok").booleanValue());
        assertEquals(1, weights.get("problem_count").intValue());
        assertEquals("missing model.norm.weight", weights.get("problems").get(0).textValue());

        Result text = fs("inspect", model.toString());
        assertEquals(1, text.exit(), text.err());
        assertTrue(text.out().contains("weights        1 problem(s): missing model.norm.weight"), text.out());
    }

    @Test
    void saysOnStderrWhenATiedCheckpointsStoredHeadIsNotUsed() throws IOException {
        Path model = TinyQwen3.write(dir.resolve("tied-with-head"), true, TinyQwen3.shapes());
        Result result = fs("inspect", model.toString(), "--json");
        assertEquals(0, result.exit(), result.err());
        assertEquals(1, result.err().lines().count(), result.err());
        assertTrue(result.err().startsWith("fs: " + model + ": the stored lm_head.weight differs from"), result.err());
        JsonNode weights = new ObjectMapper().readTree(result.out()).get("weights");
        assertTrue(weights.get("ok").booleanValue());
        assertEquals(result.err().strip(), "fs: " + model + ": " + weights.get("notes").get(0).textValue());
    }

    @Test
    void failsWithOneLineOnACorruptFile() throws IOException {
        Path model = TinyQwen3.writeTied(dir.resolve("corrupt"));
        Path weights = model.resolve("model.safetensors");
        byte[] bytes = Files.readAllBytes(weights);
        Files.write(weights, Arrays.copyOf(bytes, bytes.length / 2));
        Result result = fs("inspect", model.toString());
        assertEquals(1, result.exit());
        assertEquals("", result.out());
        assertEquals(1, result.err().lines().count(), result.err());
        assertTrue(result.err().startsWith("fs: " + weights + ": tensor '"), result.err());
        assertTrue(result.err().contains("past the end of the file"), result.err());
    }

    @Test
    void failsWithOneLineOnAMissingDirectoryOrConfig() throws IOException {
        Result missing = fs("inspect", dir.resolve("nowhere").toString());
        assertEquals(1, missing.exit());
        assertEquals("fs: " + dir.resolve("nowhere") + ": no such directory", missing.err().strip());

        Path model = TinyQwen3.writeTied(dir.resolve("noconfig"));
        Files.delete(model.resolve("config.json"));
        Result noConfig = fs("inspect", model.toString(), "--json");
        assertEquals(1, noConfig.exit());
        assertEquals("fs: " + model + " has no config.json: not a Hugging Face model directory", noConfig.err().strip());
    }
}
