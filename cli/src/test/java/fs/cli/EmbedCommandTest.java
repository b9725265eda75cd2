package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.model.Golden;
import fs.source.CheckpointGguf;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** fs embed and fs rerank on the tiny Qwen3-Embedding and Qwen3-Reranker checkpoints, against their goldens. */
class EmbedCommandTest {
    private static final double TOLERANCE = 1e-3;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** The golden's cases: text, ids, vector, truncated. */
    private static JsonNode golden(String checkpoint, String file) throws IOException {
        return JSON.readTree(Golden.modelDir(checkpoint).resolve("golden").resolve(file).toFile()).get("cases");
    }

    private static void assertVector(JsonNode expected, JsonNode actual, String what) {
        assertEquals(expected.size(), actual.size(), what + ": dimensions");
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(expected.get(i).doubleValue(), actual.get(i).doubleValue(), TOLERANCE, what + " entry " + i);
        }
    }

    @Test
    void embedsDocumentsAndInstructedQueriesAsTheReferenceDoes() throws IOException {
        String model = Golden.modelDir("tiny-embed").toString();
        JsonNode cases = golden("tiny-embed", "embedding.json");
        List<String> args = new ArrayList<>(List.of("embed", model, "--json", "-t", "2", "-ctk", "f32", "-ctv", "f32"));
        List<JsonNode> documents = new ArrayList<>();
        for (JsonNode c : cases) {
            if (c.get("kind").asText().equals("document")) {
                args.add(c.get("text").asText());
                documents.add(c);
            }
        }
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertEquals(0, run.exitCode(), run.err());
        JsonNode response = JSON.readTree(run.out());
        assertEquals("list", response.get("object").asText());
        assertEquals(documents.size(), response.get("data").size());
        long tokens = 0;
        for (int i = 0; i < documents.size(); i++) {
            JsonNode entry = response.get("data").get(i);
            assertEquals(i, entry.get("index").asInt());
            assertVector(documents.get(i).get("vector"), entry.get("embedding"), "document " + i);
            tokens += documents.get(i).get("ids").size();
        }
        assertEquals(tokens, response.get("usage").get("prompt_tokens").asLong(), "with the appended <|endoftext|>");

        JsonNode query = cases.get(2);
        String text = query.get("text").asText(); // "Instruct: {task}\nQuery:{query}"
        String task = text.substring("Instruct: ".length(), text.indexOf("\nQuery:"));
        CliRun asQuery = CliRun.of("embed", model, "--instruct", task, text.substring(text.indexOf("\nQuery:") + 7),
                "--dimensions", "8", "-t", "2");
        assertEquals(0, asQuery.exitCode(), asQuery.err());
        String[] floats = asQuery.out().strip().split(" ");
        assertEquals(8, floats.length, asQuery.out());
        for (int i = 0; i < 8; i++) {
            assertEquals(query.get("truncated").get(i).doubleValue(), Double.parseDouble(floats[i]), TOLERANCE);
        }
    }

    @Test
    void readsOneTextPerLineOfAFile() throws IOException {
        JsonNode cases = golden("tiny-embed-heldout", "embedding.json");
        Path file = Files.writeString(dir.resolve("texts.txt"),
                cases.get(0).get("text").asText() + "\n\n" + cases.get(1).get("text").asText() + "\n");
        CliRun run = CliRun.of("embed", Golden.modelDir("tiny-embed-heldout").toString(), "-f", file.toString(),
                "-t", "2");
        assertEquals(0, run.exitCode(), run.err());
        List<String> lines = run.out().strip().lines().toList();
        assertEquals(2, lines.size(), "the blank line is skipped");
        for (int i = 0; i < 2; i++) {
            String[] floats = lines.get(i).split(" ");
            assertEquals(24, floats.length);
            for (int j = 0; j < floats.length; j++) {
                assertEquals(cases.get(i).get("vector").get(j).doubleValue(), Double.parseDouble(floats[j]), TOLERANCE);
            }
        }
    }

    /** fs quantize keeps an embedding checkpoint an embedding model: pooling_type and the appended eos go along. */
    @Test
    void aQuantizedEmbeddingCheckpointStillEmbedsAsTheReference() throws IOException {
        JsonNode cases = golden("tiny-embed-heldout", "embedding.json");
        Path gguf = dir.resolve("embed.gguf");
        CliRun quantize = CliRun.of("quantize", Golden.modelDir("tiny-embed-heldout").toString(), "-o", gguf.toString(),
                "--type", "BF16", "-t", "2");
        assertEquals(0, quantize.exitCode(), quantize.err());
        CliRun run = CliRun.of("embed", gguf.toString(), cases.get(0).get("text").asText(), "--json", "-t", "2");
        assertEquals(0, run.exitCode(), run.err());
        JsonNode response = JSON.readTree(run.out());
        assertVector(cases.get(0).get("vector"), response.get("data").get(0).get("embedding"), "from the GGUF");
        assertEquals(cases.get(0).get("ids").size(), response.get("usage").get("prompt_tokens").asInt(),
                "<|endoftext|> appended by add_eos_token");
    }

    @Test
    void badInputIsOneLineAndExitTwo() {
        String embed = Golden.modelDir("tiny-embed").toString();
        String tied = Golden.modelDir("tiny-tied").toString();
        assertUsage(onCpu("embed", tied, "hello"), tied + " is not an embedding model");
        assertUsage(onCpu("embed", embed), "no input: give TEXT… or -f FILE");
        assertUsage(onCpu("embed", embed, ""), "text 0 is empty");
        assertUsage(onCpu("embed", embed, "a", "a much longer text than four tokens", "-c", "4"),
                "input 1 has 8 tokens, more than the context of 4");
        assertUsage(onCpu("embed", embed, "hello", "--dimensions", "17"),
                "--dimensions 17 is more than the model's 16");
        assertUsage(onCpu("rerank", embed, "-q", "q", "d"), embed + " is an embedding model");
        assertUsage(onCpu("rerank", Golden.modelDir("tiny-rerank").toString(), "-q", "", "d"),
                "-q is empty");
        CliRun truncated = CliRun.of("embed", embed, "a much longer text than four tokens", "-c", "4", "--truncate",
                "-t", "2");
        assertEquals(0, truncated.exitCode(), truncated.err());
    }

    /** fs with {@code args} on the CPU backend, two threads (no line saying why not OpenCL). */
    private static CliRun onCpu(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("-t", "2", "--backend", "cpu"));
        return CliRun.of(all.toArray(String[]::new));
    }

    /** Exit 2 and one line saying what is wrong, the model never loaded (no load line). */
    private static void assertUsage(CliRun run, String expected) {
        assertEquals(2, run.exitCode(), run.out() + run.err());
        List<String> lines = run.err().lines().toList();
        assertEquals(1, lines.size(), run.err());
        assertTrue(lines.getFirst().startsWith("fs: " + expected), lines.getFirst());
    }

    @Test
    void ranksDocumentsByTheReferencesYesProbability() throws IOException {
        String model = Golden.modelDir("tiny-rerank-heldout").toString();
        JsonNode cases = golden("tiny-rerank-heldout", "rerank.json");
        List<String> args = new ArrayList<>(List.of("rerank", model, "-q", cases.get(0).get("query").asText(),
                "--json", "-t", "2"));
        for (int i = 0; i < 3; i++) args.add(cases.get(i).get("document").asText());
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertEquals(0, run.exitCode(), run.err());
        JsonNode results = JSON.readTree(run.out()).get("results");
        assertEquals(3, results.size());
        double previous = 1;
        for (JsonNode result : results) {
            int index = result.get("index").asInt();
            double score = result.get("relevance_score").asDouble();
            assertEquals(cases.get(index).get("p_yes").asDouble(), score, TOLERANCE, "document " + index);
            assertEquals(cases.get(index).get("document").asText(), result.get("document").get("text").asText());
            assertTrue(score <= previous, "highest first");
            previous = score;
        }

        JsonNode other = cases.get(3);
        CliRun instructed = CliRun.of("rerank", model, "-q", other.get("query").asText(), "--instruct",
                other.get("instruction").asText(), other.get("document").asText(), "d", "--top-n", "1", "-t", "2");
        assertEquals(0, instructed.exitCode(), instructed.err());
        List<String> lines = instructed.out().strip().lines().toList();
        assertEquals(1, lines.size(), "--top-n 1");
        String[] fields = lines.getFirst().split("\t");
        if (fields[1].equals("0")) {
            assertEquals(other.get("p_yes").asDouble(), Double.parseDouble(fields[0]), TOLERANCE);
            assertEquals(other.get("document").asText(), fields[2]);
        } else {
            assertTrue(Double.parseDouble(fields[0]) >= other.get("p_yes").asDouble() - TOLERANCE, lines.getFirst());
        }
    }

    /**
     * llama.cpp's reranker GGUF of the held-out reranker (pooling_type rank, the "yes" and "no" rows as its classifier
     * head) ranks the golden's documents as the checkpoint does: the same order, the same scores to rounding, and the
     * reference's P(yes).
     */
    @Test
    void aRerankerGgufRanksAsTheCheckpointAndTheReference() throws IOException {
        Path checkpoint = Golden.modelDir("tiny-rerank-heldout");
        JsonNode cases = golden("tiny-rerank-heldout", "rerank.json");
        Path gguf = CheckpointGguf.writeReranker(checkpoint, dir.resolve("rerank.gguf"), 2);
        JsonNode fromCheckpoint = rerankJson(checkpoint, cases);
        JsonNode fromGguf = rerankJson(gguf, cases);
        assertEquals(3, fromGguf.size());
        for (int i = 0; i < fromGguf.size(); i++) {
            int index = fromGguf.get(i).get("index").asInt();
            double score = fromGguf.get(i).get("relevance_score").asDouble();
            assertEquals(fromCheckpoint.get(i).get("index").asInt(), index, "rank " + i + ": the same order");
            assertEquals(fromCheckpoint.get(i).get("relevance_score").asDouble(), score, 1e-5, "document " + index);
            assertEquals(cases.get(index).get("p_yes").asDouble(), score, TOLERANCE, "document " + index);
        }
    }

    /** fs rerank --json of the golden's first query and three documents on {@code model}: its results. */
    private static JsonNode rerankJson(Path model, JsonNode cases) throws IOException {
        List<String> args = new ArrayList<>(List.of("rerank", model.toString(), "-q", cases.get(0).get("query").asText(),
                "--json", "-t", "2", "--backend", "cpu"));
        for (int i = 0; i < 3; i++) args.add(cases.get(i).get("document").asText());
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertEquals(0, run.exitCode(), run.err());
        return JSON.readTree(run.out()).get("results");
    }

    /**
     * A reranker GGUF without its classifier head, with one of another shape, or whose rows are labelled other than
     * "yes" and "no", is one line and exit 1.
     */
    @Test
    void aRerankerGgufWithoutAUsableHeadIsOneLine() throws IOException {
        Path checkpoint = Golden.modelDir("tiny-rerank-heldout");
        Path headless = CheckpointGguf.writeReranker(checkpoint, dir.resolve("headless.gguf"), 0);
        assertOneLine(onCpu("rerank", headless.toString(), "-q", "q", "d"), headless
                + ": pooling_type is rank but the file has no cls.output.weight (the reranker's classifier head");
        Path threeRows = CheckpointGguf.writeReranker(checkpoint, dir.resolve("three-rows.gguf"), 3);
        assertOneLine(onCpu("rerank", threeRows.toString(), "-q", "q", "d"), threeRows
                + ": weights do not match the file's metadata (1 problem): cls.output.weight has shape [3, 24], expected"
                + " [2, 24]");
        Path gguf = CheckpointGguf.writeReranker(checkpoint, dir.resolve("rerank.gguf"), 2);
        byte[] bytes = Files.readAllBytes(gguf);
        int labels = indexOf(bytes, "qwen3.classifier.output_labels", 0);
        int yes = indexOf(bytes, "yes", labels);
        bytes[yes] = 'Y'; // the labels become ["Yes", "no"]
        Path relabelled = Files.write(dir.resolve("relabelled.gguf"), bytes);
        assertOneLine(onCpu("rerank", relabelled.toString(), "-q", "q", "d"), relabelled
                + ": key 'qwen3.classifier.output_labels' is [Yes, no]; fs scores a reranker whose classifier rows are"
                + " [yes, no]");
        assertOneLine(CliRun.of("quantize", gguf.toString(), "-o", dir.resolve("q.gguf").toString(), "-t", "2"),
                gguf + " is llama.cpp's reranker GGUF (pooling_type rank), whose classifier head fs quantize does not"
                        + " carry");
    }

    /** Where {@code text}'s ASCII bytes first occur in {@code bytes} from {@code from} on. */
    private static int indexOf(byte[] bytes, String text, int from) {
        byte[] wanted = text.getBytes(StandardCharsets.US_ASCII);
        for (int i = from; i + wanted.length <= bytes.length; i++) {
            if (Arrays.equals(bytes, i, i + wanted.length, wanted, 0, wanted.length)) return i;
        }
        throw new AssertionError(text + " is not in the file");
    }

    /** Exit 1 and one line on stderr, {@code expected} at its start after "fs: ". */
    private static void assertOneLine(CliRun run, String expected) {
        assertEquals(1, run.exitCode(), run.out() + run.err());
        List<String> lines = run.err().lines().toList();
        assertEquals(1, lines.size(), run.err());
        assertTrue(lines.getFirst().startsWith("fs: " + expected), lines.getFirst());
    }
}
