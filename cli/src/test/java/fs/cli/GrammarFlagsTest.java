package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.model.Golden;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** fs run's llama-cli grammar flags: the answer follows the grammar or schema; a bad one is one line, exit 2. */
class GrammarFlagsTest {
    private static final String MODEL = Golden.modelDir("tiny-tied").toString();

    @Test
    void aJsonSchemaShapesTheAnswer(@TempDir Path dir) throws Exception {
        String schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"},\"ok\":{\"type\":\"boolean\"}},"
                + "\"required\":[\"n\",\"ok\"],\"additionalProperties\":false}";
        Path file = Files.writeString(dir.resolve("schema.json"), schema);
        for (String[] flag : new String[][] {{"--json-schema", schema}, {"-j", file.toString()}, {"-jf", file.toString()}}) {
            CliRun run = CliRun.of("run", MODEL, "Give me JSON", flag[0], flag[1], "--temp", "1", "--seed", "5", "-n", "300", "-t", "2");
            assertEquals(0, run.exitCode(), run.err());
            JsonNode answer = new ObjectMapper().readTree(run.out());
            assertTrue(answer.get("n").isIntegralNumber() && answer.get("ok").isBoolean() && answer.size() == 2, run.out());
        }
    }

    @Test
    void aGbnfGrammarShapesTheAnswer(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("g.gbnf"), "# yes or no\nroot ::= \"yes\" | \"no\"\n");
        for (String[] flag : new String[][] {{"--grammar", "root ::= \"yes\" | \"no\""}, {"--grammar-file", file.toString()}}) {
            CliRun run = CliRun.of("run", MODEL, "Well?", flag[0], flag[1], "--temp", "1", "--seed", "1", "-n", "20", "-t", "2");
            assertEquals(0, run.exitCode(), run.err());
            assertTrue(run.out().strip().equals("yes") || run.out().strip().equals("no"), run.out());
        }
    }

    @Test
    void aBadGrammarOrSchemaIsOneLineAndExitTwo(@TempDir Path dir) {
        String[][] cases = {
                {"--json-schema", "{\"type\":\"string\",\"pattern\":\"a+\"}", "--json-schema: schema #: unsupported keyword 'pattern'"},
                {"--json-schema", "{\"type\":", "--json-schema: not JSON"},
                {"--grammar", "root ::= undefined", "--grammar: grammar 1:10: undefined rule 'undefined'"},
                {"--grammar-file", dir.resolve("none.gbnf").toString(), "no such file"},
        };
        for (String[] c : cases) {
            CliRun run = CliRun.of("run", MODEL, "hi", c[0], c[1]);
            assertEquals(2, run.exitCode(), run.err());
            assertTrue(run.err().startsWith("fs: ") && run.err().contains(c[2]), run.err());
            assertEquals(1, run.err().strip().lines().count(), run.err());
        }
        CliRun both = CliRun.of("run", MODEL, "hi", "--grammar", "root ::= \"a\"", "-j", "{}");
        assertEquals(2, both.exitCode());
        assertTrue(both.err().contains("--grammar and --json-schema are exclusive"), both.err());
    }
}
