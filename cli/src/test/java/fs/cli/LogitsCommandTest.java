package fs.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.model.Golden;
import fs.model.TinyQwen3;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogitsCommandTest {

    @Test
    void printsTheTopLogitsOfEveryPositionAsJson() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        int[] tokens = Arrays.copyOf(golden.promptIds(), 20); // a prefix: its logits are the reference's first 20
        // The golden is the float64 math of the checkpoint: the float32 cache is the one held to it.
        CliRun run = CliRun.of("logits", golden.modelDir().toString(), "--tokens", CliRun.ids(tokens), "--top", "5",
                "-t", "2", "-ctk", "f32", "-ctv", "f32");
        assertEquals(0, run.exitCode(), run.err());
        assertEquals(1, run.out().strip().lines().count(), "one JSON object on one line");

        JsonNode root = new ObjectMapper().readTree(run.out());
        assertEquals(tokens.length, root.get("tokens").size());
        for (int i = 0; i < tokens.length; i++) assertEquals(tokens[i], root.get("tokens").get(i).intValue());
        JsonNode positions = root.get("positions");
        assertEquals(tokens.length, positions.size());
        for (int p = 0; p < tokens.length; p++) {
            Golden.Position expected = golden.positions().get(p);
            JsonNode ids = positions.get(p).get("top_ids");
            JsonNode logits = positions.get(p).get("top_logits");
            int[] actualIds = new int[ids.size()];
            for (int i = 0; i < actualIds.length; i++) actualIds[i] = ids.get(i).intValue();
            assertArrayEquals(expected.topIds(), actualIds, "position " + p);
            for (int i = 0; i < 5; i++) {
                assertEquals(expected.topLogits()[i], logits.get(i).doubleValue(), 1e-3, "position " + p + " rank " + i);
            }
        }
    }

    /** -p TEXT is tokenized as fs tokenize does; fs tokenize's output, given to --tokens, is the same input. */
    @Test
    void textAndTokenizedIdsAreTheSameInput() throws IOException {
        String model = Golden.modelDir("tiny-tied").toString();
        String text = "Why is the sky blue?";
        CliRun tokenized = CliRun.of("tokenize", model, text);
        assertEquals(0, tokenized.exitCode(), tokenized.err());
        CliRun fromText = CliRun.of("logits", model, "-p", text, "--top", "3", "-t", "2");
        assertEquals(0, fromText.exitCode(), fromText.err());
        CliRun fromIds = CliRun.of("logits", model, "--tokens", tokenized.out().strip(), "--top", "3", "-t", "2");
        assertEquals(0, fromIds.exitCode(), fromIds.err());

        assertEquals(fromText.out(), fromIds.out());
        JsonNode tokens = new ObjectMapper().readTree(fromIds.out()).get("tokens");
        StringBuilder ids = new StringBuilder();
        for (JsonNode id : tokens) ids.append(ids.isEmpty() ? "" : " ").append(id.intValue());
        assertEquals(tokenized.out().strip(), ids.toString());
        assertTrue(tokens.size() > 1, tokenized.out());
    }

    /** Each is a usage error found before the model is looked for (it does not exist). */
    @Test
    void badInputIsAUsageErrorBeforeTheModelLoads() {
        String absent = "/nonexistent/model";
        List<List<String>> cases = List.of(
                List.of("fs: no input: give --tokens IDS or -p TEXT (see 'fs logits --help')"),
                List.of("fs: --tokens and -p are exclusive: give the input one way (see 'fs logits --help')",
                        "--tokens", "1", "-p", "Hello"),
                List.of("fs: --top must be at least 1, got 0 (see 'fs logits --help')", "--tokens", "1", "--top", "0"),
                List.of("fs: -p is empty: there is nothing to score (see 'fs logits --help')", "-p", ""),
                List.of("fs: invalid value for --tokens: no token ids (see 'fs logits --help')", "--tokens", " , "),
                List.of("fs: invalid value for --tokens: '2x' is not a token id (ids are integers from 0, separated by "
                        + "spaces or commas); see 'fs logits --help'", "--tokens", "1 2x"));
        for (List<String> expected : cases) {
            List<String> args = new ArrayList<>(List.of("logits", absent));
            args.addAll(expected.subList(1, expected.size()));
            CliRun run = CliRun.of(args.toArray(String[]::new));
            assertEquals(2, run.exitCode(), run.err());
            assertEquals(expected.getFirst(), run.err().strip());
        }
    }

    @Test
    void loadingSaysWhenATiedCheckpointsStoredHeadIsNotUsed(@TempDir Path dir) {
        Path model = TinyQwen3.write(dir.resolve("tied-with-head"), true, TinyQwen3.shapes());
        CliRun run = CliRun.of("logits", model.toString(), "--tokens", "1,2", "-t", "1", "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.err().lines().anyMatch(line -> line.startsWith("fs: " + model + ": the stored lm_head.weight"
                + " differs from model.embed_tokens.weight and is not used")), run.err());
    }

    @Test
    void tokensBeyondTheContextAreOneErrorLine() {
        CliRun run = CliRun.of("logits", Golden.modelDir("tiny-tied").toString(), "--tokens", "1,2,3,4,5", "--ctx", "4",
                "-t", "2");
        assertEquals(1, run.exitCode());
        assertEquals("", run.out());
        assertTrue(run.err().strip().lines().reduce((a, b) -> b).orElse("").contains("do not fit the context of 4"),
                run.err());
    }
}
