package fs.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.hub.CachedModels.CachedModel;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** fs list and fs rm's view of a Hugging Face cache filled by real downloads from a fake hub. */
class CachedModelsTest {
    @TempDir
    Path temp;

    private Map<String, String> environment() {
        return Map.of("HF_HUB_CACHE", temp.resolve("cache").toString());
    }

    /** Downloads {@code files} of {@code repo} from a fake hub into the cache, as fs run would. */
    private void download(String repo, String model, Map<String, byte[]> files) throws IOException {
        try (FakeHub hub = new FakeHub(repo)) {
            files.forEach((name, content) -> {
                if (content.length > 1000) hub.lfsFile(name, content);
                else hub.file(name, new String(content, java.nio.charset.StandardCharsets.UTF_8));
            });
            Map<String, String> env = new java.util.HashMap<>(environment());
            env.put("HF_ENDPOINT", hub.endpoint());
            new ModelResolver(env, new PrintWriter(new StringWriter()), false).resolveModel(model);
        }
    }

    private static byte[] random(int size, int seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    private static byte[] text(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private void downloadSafetensorsRepo() throws IOException {
        download("acme/Tiny-0.1B", "acme/Tiny-0.1B", Map.of(
                "config.json", text("{\"model_type\": \"qwen3\"}"),
                "tokenizer.json", text("{\"model\": {}}"),
                "tokenizer_config.json", text("{}"),
                "model.safetensors", random(20_000, 1)));
    }

    @Test
    void anEmptyOrAbsentCacheListsNothing() {
        assertEquals(List.of(), CachedModels.in(environment()).list());
    }

    @Test
    void listsEachCachedRepoWithItsCommitBytesFilesAndFormat() throws IOException {
        downloadSafetensorsRepo();
        download("acme/Tiny-GGUF", "acme/Tiny-GGUF:Q8_0", Map.of(
                "README.md", text("# Tiny"), "Tiny-Q8_0.gguf", random(5_000, 2), "Tiny-Q4_0.gguf", random(3_000, 3)));
        Files.createDirectories(temp.resolve("cache").resolve("datasets--acme--texts")); // not a model: skipped

        List<CachedModel> models = CachedModels.in(environment()).list();

        assertEquals(List.of("acme/Tiny-0.1B", "acme/Tiny-GGUF"), models.stream().map(m -> m.repo().toString()).toList());
        CachedModel safetensors = models.get(0);
        assertEquals(FakeHub.COMMIT, safetensors.commit());
        assertEquals(FakeHub.COMMIT.substring(0, 7), safetensors.revision());
        long expected = 20_000 + text("{\"model_type\": \"qwen3\"}").length + text("{\"model\": {}}").length + 2;
        assertEquals(expected, safetensors.bytes(), "every blob counted once");
        assertEquals(List.of("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"),
                safetensors.files());
        assertEquals("safetensors", safetensors.format());
        CachedModel gguf = models.get(1);
        assertEquals(5_000, gguf.bytes(), "only the file that was pulled is on disk");
        assertEquals("gguf (Q8_0)", gguf.format());
    }

    @Test
    void aRepoWithoutASnapshotOfMainIsListedAsIncomplete() throws IOException {
        Files.createDirectories(temp.resolve("cache").resolve("models--acme--Half").resolve("blobs"));
        CachedModel half = CachedModels.in(environment()).list().getFirst();
        assertNull(half.commit());
        assertEquals("-", half.revision());
        assertTrue(half.format().startsWith("incomplete"), half.format());
    }

    @Test
    void removeDeletesTheRepoFolderAndSaysWhatItWas() throws IOException {
        downloadSafetensorsRepo();
        CachedModels cache = CachedModels.in(environment());
        CachedModel removed = cache.remove(RepoId.parse("acme/Tiny-0.1B").orElseThrow());
        assertEquals("acme/Tiny-0.1B", removed.repo().toString());
        assertTrue(removed.bytes() > 20_000);
        assertFalse(Files.exists(temp.resolve("cache").resolve("models--acme--Tiny-0.1B")));
        assertEquals(List.of(), cache.list());
    }

    @Test
    void removeNeverFollowsALinkOutOfTheCache() throws IOException {
        downloadSafetensorsRepo();
        Path outside = Files.writeString(temp.resolve("precious.txt"), "keep me");
        Path snapshot = temp.resolve("cache").resolve("models--acme--Tiny-0.1B").resolve("snapshots").resolve(FakeHub.COMMIT);
        Files.createSymbolicLink(snapshot.resolve("extra.txt"), outside);
        Files.createSymbolicLink(snapshot.resolve("elsewhere"), temp);
        CachedModels.in(environment()).remove(RepoId.parse("acme/Tiny-0.1B").orElseThrow());
        assertEquals("keep me", Files.readString(outside));
        assertTrue(Files.isDirectory(temp));
    }

    @Test
    void removingARepoThatIsNotCachedIsOneLineNamingIt() {
        FsException e = assertThrows(FsException.class,
                () -> CachedModels.in(environment()).remove(RepoId.parse("acme/Nothing").orElseThrow()));
        assertTrue(e.getMessage().startsWith("acme/Nothing is not in the Hugging Face cache"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void folderNamesMapBackToRepoIds() {
        assertEquals("Qwen/Qwen3-0.6B", CachedModels.repoOf("models--Qwen--Qwen3-0.6B").orElseThrow().toString());
        assertTrue(CachedModels.repoOf("datasets--a--b").isEmpty());
        assertTrue(CachedModels.repoOf("models--noseparator").isEmpty());
        assertTrue(CachedModels.repoOf("version.txt").isEmpty());
    }
}
