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
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogitsCommandTest {

    @Test
    void printsTheTopLogitsOfEveryPositionAsJson() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        int[] tokens = Arrays.copyOf(golden.promptIds(), 20); // a prefix: its logits are the reference's first 20
        CliRun run = CliRun.of("logits", golden.modelDir().toString(), "--tokens", CliRun.ids(tokens), "--top", "5",
                "-t", "2");
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
