package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.hub.CachedModels.CachedModel;
import fs.hub.RepoId;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

class ListCommandTest {
    private static final List<CachedModel> MODELS = List.of(
            new CachedModel(RepoId.parse("Qwen/Qwen3-0.6B").orElseThrow(), "c1899de289a04d12100db370d81485cdf75e47ca",
                    1_503_300_328L, List.of("config.json", "model.safetensors"), "safetensors"),
            new CachedModel(RepoId.parse("a/b").orElseThrow(), null, 0, List.of(), "incomplete (no snapshot of main)"));

    private static String print(boolean json) throws Exception {
        StringWriter out = new StringWriter();
        ListCommand.print(MODELS, json, new PrintWriter(out));
        return out.toString();
    }

    @Test
    void aTableWithOneAlignedRowPerRepo() throws Exception {
        List<String> lines = print(false).lines().toList();
        assertEquals(List.of(
                "REPO             REVISION       SIZE  FORMAT",
                "Qwen/Qwen3-0.6B  c1899de    1.40 GiB  safetensors",
                "a/b              -               0 B  incomplete (no snapshot of main)"), lines);
    }

    @Test
    void jsonKeepsTheWholeCommitAndTheFiles() throws Exception {
        JsonNode array = new ObjectMapper().readTree(print(true));
        assertEquals(2, array.size());
        assertEquals("c1899de289a04d12100db370d81485cdf75e47ca", array.get(0).get("commit").asText());
        assertEquals(1_503_300_328L, array.get(0).get("bytes").asLong());
        assertEquals("model.safetensors", array.get(0).get("files").get(1).asText());
        assertEquals(true, array.get(1).get("commit").isNull());
    }
}
