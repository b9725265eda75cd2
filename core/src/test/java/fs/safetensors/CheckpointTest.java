package fs.safetensors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.tensor.Tensor;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @TempDir
    Path dir;

    private static void index(Path directory, String weightMapJson) throws IOException {
        Files.writeString(directory.resolve(Checkpoint.INDEX_FILE),
                "{\"metadata\": {\"total_size\": 0}, \"weight_map\": " + weightMapJson + "}");
    }

    private void twoShards() {
        new SafetensorsWriter().f32("b", new long[] {1}, 2f).f32("a", new long[] {1}, 1f)
                .write(dir.resolve("model-00001-of-00002.safetensors"));
        new SafetensorsWriter().f32("c", new long[] {2}, 3f, 4f).write(dir.resolve("model-00002-of-00002.safetensors"));
    }

    private FsException openFails(Path directory, String... parts) {
        FsException e = assertThrows(FsException.class, () -> Checkpoint.open(directory));
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        for (String part : parts) assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
        return e;
    }

    @Test
    void opensASingleModelSafetensors() {
        new SafetensorsWriter().f32("w", new long[] {2}, 1f, 2f).write(dir.resolve("model.safetensors"));
        try (Checkpoint checkpoint = Checkpoint.open(dir)) {
            assertEquals(List.of(dir.resolve("model.safetensors")),
                    checkpoint.files().stream().map(SafetensorsFile::path).toList());
            Tensor w = checkpoint.tensor("w");
            assertEquals(2f, w.data().getAtIndex(F32, 1));
            assertSame(w, checkpoint.find("w").orElseThrow());
            assertTrue(checkpoint.find("v").isEmpty());
            FsException e = assertThrows(FsException.class, () -> checkpoint.tensor("v"));
            assertTrue(e.getMessage().contains("'v'") && e.getMessage().contains(dir.toString()), e.getMessage());
        }
    }

    @Test
    void opensTheOnlySafetensorsFileWhateverItsName() {
        new SafetensorsWriter().f32("w", new long[] {1}, 5f).write(dir.resolve("weights.safetensors"));
        try (Checkpoint checkpoint = Checkpoint.open(dir)) {
            assertEquals(5f, checkpoint.tensor("w").data().get(F32, 0));
        }
    }

    @Test
    void opensShardsThroughTheIndexInShardOrder() throws IOException {
        twoShards();
        index(dir, "{\"c\": \"model-00002-of-00002.safetensors\", \"a\": \"model-00001-of-00002.safetensors\","
                + " \"b\": \"model-00001-of-00002.safetensors\"}");
        try (Checkpoint checkpoint = Checkpoint.open(dir)) {
            assertEquals(List.of("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"),
                    checkpoint.files().stream().map(f -> f.path().getFileName().toString()).toList());
            assertEquals(List.of("b", "a", "c"), checkpoint.tensors().stream().map(Tensor::name).toList());
            assertEquals(1f, checkpoint.tensor("a").data().get(F32, 0));
            assertEquals(4f, checkpoint.tensor("c").data().getAtIndex(F32, 1));
        }
    }

    @Test
    void closeUnmapsEveryShard() throws IOException {
        twoShards();
        index(dir, "{\"a\": \"model-00001-of-00002.safetensors\", \"c\": \"model-00002-of-00002.safetensors\"}");
        Checkpoint checkpoint = Checkpoint.open(dir);
        Tensor a = checkpoint.tensor("a");
        Tensor c = checkpoint.tensor("c");
        checkpoint.close();
        assertThrows(IllegalStateException.class, () -> a.data().get(F32, 0));
        assertThrows(IllegalStateException.class, () -> c.data().get(F32, 0));
    }

    @Test
    void rejectsAnIndexThatNamesAMissingShard() throws IOException {
        twoShards();
        index(dir, "{\"a\": \"model-00001-of-00002.safetensors\", \"z\": \"model-00003-of-00003.safetensors\"}");
        openFails(dir, Checkpoint.INDEX_FILE, "'z'", "model-00003-of-00003.safetensors", "does not exist");
    }

    @Test
    void rejectsAnIndexThatPlacesTensorsInTheWrongShard() throws IOException {
        twoShards();
        index(dir, "{\"a\": \"model-00002-of-00002.safetensors\", \"c\": \"model-00002-of-00002.safetensors\","
                + " \"q\": \"model-00001-of-00002.safetensors\"}");
        openFails(dir, Checkpoint.INDEX_FILE, "'a' is not in model-00002-of-00002.safetensors",
                "'q' is not in model-00001-of-00002.safetensors");
    }

    @Test
    void rejectsAnIndexWithoutAWeightMapOrPointingOutsideTheDirectory() throws IOException {
        twoShards();
        Files.writeString(dir.resolve(Checkpoint.INDEX_FILE), "{\"metadata\": {}}");
        openFails(dir, Checkpoint.INDEX_FILE, "weight_map is missing");
        index(dir, "{\"a\": \"../elsewhere.safetensors\"}");
        openFails(dir, "'a'", "not a file inside");
        index(dir, "{\"a\": 3}");
        openFails(dir, "'a'", "must be a file name");
        Files.writeString(dir.resolve(Checkpoint.INDEX_FILE), "{\"weight_map\": {\"a\": \"x\", \"a\": \"y\"}}");
        openFails(dir, Checkpoint.INDEX_FILE, "Duplicate");
    }

    @Test
    void rejectsATensorStoredInTwoShards() throws IOException {
        new SafetensorsWriter().f32("a", new long[] {1}, 1f).write(dir.resolve("model-00001-of-00002.safetensors"));
        new SafetensorsWriter().f32("a", new long[] {1}, 2f).write(dir.resolve("model-00002-of-00002.safetensors"));
        index(dir, "{\"a\": \"model-00001-of-00002.safetensors\", \"b\": \"model-00002-of-00002.safetensors\"}");
        openFails(dir, "'a'", "in both");
    }

    @Test
    void reportsACorruptShardByItsFileName() throws IOException {
        twoShards();
        Files.write(dir.resolve("model-00002-of-00002.safetensors"), new byte[] {1, 2});
        index(dir, "{\"a\": \"model-00001-of-00002.safetensors\", \"c\": \"model-00002-of-00002.safetensors\"}");
        openFails(dir, "model-00002-of-00002.safetensors", "too short");
    }

    @Test
    void rejectsDirectoriesWithoutAnUnambiguousCheckpoint() throws IOException {
        openFails(dir.resolve("absent"), "no such model directory");
        openFails(Files.writeString(dir.resolve("file.txt"), "x"), "not a directory");
        Path empty = Files.createDirectory(dir.resolve("empty"));
        openFails(empty, "no .safetensors file");
        twoShards();
        openFails(dir, "2 .safetensors files", Checkpoint.INDEX_FILE);
    }

    /** Tensor and shard names from the index are quoted and cut, and only the first few missing ones listed. */
    @Test
    void quotesNamesFromTheIndexOnOneShortLine() throws IOException {
        twoShards();
        String odd = "a\\n" + "x".repeat(2000);
        index(dir, "{\"" + odd + "\": \"model-00001-of-00002.safetensors\"}");
        FsException absent = openFails(dir, "'a\\u000a" + "x".repeat(58) + "…' is not in model-00001-of-00002.safetensors");
        assertTrue(absent.getMessage().length() < 400, "short: " + absent.getMessage());
        index(dir, "{\"a\": \"" + odd + ".safetensors\"}");
        openFails(dir, "is in shard 'a\\u000a" + "x".repeat(58) + "…', which does not exist");
        index(dir, "{\"a\": \"nul\\u0000.safetensors\"}");
        openFails(dir, "names 'nul\\u0000.safetensors', which is not a file inside");
        StringBuilder many = new StringBuilder("{\"a\": \"model-00001-of-00002.safetensors\"");
        for (int i = 0; i < 1000; i++) many.append(", \"t").append(i).append("\": \"model-00001-of-00002.safetensors\"");
        index(dir, many.append("}").toString());
        FsException manyAbsent = openFails(dir, "'t0' is not in", "'t4' is not in", "; and 995 more");
        assertFalse(manyAbsent.getMessage().contains("'t5'"), manyAbsent.getMessage());
    }
}
