package fs.hub;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelResolverTest {
    private static final String REPO = "acme/Tiny-0.1B";
    private static final int WEIGHTS_SIZE = 3 * 1024 * 1024 + 12_345;

    @TempDir
    Path temp;

    private FakeHub hub;
    private Path cacheRoot;
    private StringWriter log;

    @BeforeEach
    void startHub() throws IOException {
        byte[] weights = new byte[WEIGHTS_SIZE];
        new Random(1).nextBytes(weights);
        hub = new FakeHub(REPO)
                .file("config.json", "{\"model_type\": \"qwen3\"}")
                .file("tokenizer.json", "{\"model\": {}}")
                .file("tokenizer_config.json", "{\"eos_token\": \"<|im_end|>\"}")
                .lfsFile("model.safetensors", weights);
        cacheRoot = temp.resolve("hub-cache");
        log = new StringWriter();
    }

    @AfterEach
    void stopHub() {
        hub.close();
    }

    private Map<String, String> environment(String... extra) {
        Map<String, String> env = new HashMap<>(Map.of("HF_HUB_CACHE", cacheRoot.toString(),
                "HF_ENDPOINT", hub.endpoint()));
        for (int i = 0; i < extra.length; i += 2) env.put(extra[i], extra[i + 1]);
        return env;
    }

    private Path resolve(Map<String, String> environment) {
        return resolve(environment, REPO);
    }

    private Path resolve(Map<String, String> environment, String model) {
        return resolve(environment, model, Duration.ofSeconds(20));
    }

    private Path resolve(Map<String, String> environment, String model, Duration readTimeout) {
        return new ModelResolver(environment, new PrintWriter(log, true), false, readTimeout).resolveModel(model);
    }

    private Path repoDir() {
        return cacheRoot.resolve("models--acme--Tiny-0.1B");
    }

    private Path weightsBlob() {
        return repoDir().resolve("blobs").resolve(FakeHub.sha256(hub.content("model.safetensors")));
    }

    private Path weightsPartial() {
        return weightsBlob().resolveSibling(weightsBlob().getFileName() + ".incomplete");
    }

    private static void assertOneLine(FsException e) {
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
    }

    @Test
    void aColdDownloadFillsTheHuggingFaceCacheLayout() throws IOException {
        Path snapshot = resolve(environment());

        assertEquals(repoDir().resolve("snapshots").resolve(FakeHub.COMMIT), snapshot);
        assertEquals(FakeHub.COMMIT, Files.readString(repoDir().resolve("refs").resolve("main")));
        for (String file : List.of("config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors")) {
            Path link = snapshot.resolve(file);
            assertTrue(Files.isSymbolicLink(link), file + " is a link");
            byte[] content = hub.content(file);
            String blobName = file.equals("model.safetensors") ? FakeHub.sha256(content) : FakeHub.sha1(content);
            assertEquals(Path.of("..", "..", "blobs", blobName), Files.readSymbolicLink(link));
            assertArrayEquals(content, Files.readAllBytes(link), file);
        }
        assertFalse(Files.exists(snapshot.resolve("generation_config.json")));
        assertTrue(Files.exists(repoDir().resolve(".no_exist").resolve(FakeHub.COMMIT)
                .resolve("generation_config.json")), "the 404 is remembered as huggingface_hub does");
        try (Stream<Path> blobs = Files.list(repoDir().resolve("blobs"))) {
            assertTrue(blobs.noneMatch(p -> p.toString().endsWith(".incomplete")));
        }
        assertTrue(log.toString().contains("downloaded model.safetensors: "
                + fs.HumanSize.of(hub.content("model.safetensors").length) + " in "), log.toString());
        assertTrue(hub.cdnAuthorizations.isEmpty() && hub.hubAuthorizations.isEmpty(), "no token, none sent");
    }

    @Test
    void theSecondResolveUsesTheCacheWithoutAnyRequest() {
        Path first = resolve(environment());
        int requests = hub.requests.size();
        assertEquals(first, resolve(environment()));
        assertEquals(requests, hub.requests.size(), "requests after the first resolve: " + hub.requests);
    }

    @Test
    void anInterruptedDownloadResumesWithARangeRequest() throws IOException {
        hub.cutNextTransferAfter = 1_000_000;
        FsException e = assertThrows(FsException.class, () -> resolve(environment()));
        assertOneLine(e);
        assertTrue(e.getMessage().contains("could not be downloaded (the transfer broke off after")
                && e.getMessage().contains("): run again (downloads resume)"), e.getMessage());
        long partial = Files.size(weightsPartial());
        assertTrue(partial > 0 && partial <= 1_000_000, "kept " + partial + " bytes");
        assertFalse(Files.exists(repoDir().resolve("refs").resolve("main")), "no ref to an incomplete snapshot");

        long servedBefore = hub.cdnBytesServed.get();
        Path snapshot = resolve(environment());

        assertEquals(List.of("bytes=" + partial + "-"), hub.cdnRanges);
        assertEquals(WEIGHTS_SIZE - partial, hub.cdnBytesServed.get() - servedBefore, "only the rest was sent");
        assertArrayEquals(hub.content("model.safetensors"), Files.readAllBytes(snapshot.resolve("model.safetensors")));
        assertFalse(Files.exists(weightsPartial()));
    }

    @Test
    void aChecksumMismatchDeletesTheDownloadAndLinksNothing() {
        hub.corrupt = true;
        FsException e = assertThrows(FsException.class, () -> resolve(environment()));
        assertOneLine(e);
        assertTrue(e.getMessage().contains("model.safetensors has sha256"), e.getMessage());
        assertTrue(e.getMessage().contains(FakeHub.sha256(hub.content("model.safetensors"))), e.getMessage());
        assertFalse(Files.exists(weightsPartial()));
        assertFalse(Files.exists(weightsBlob()));
        Path snapshot = repoDir().resolve("snapshots").resolve(FakeHub.COMMIT);
        assertFalse(Files.exists(snapshot.resolve("model.safetensors"), java.nio.file.LinkOption.NOFOLLOW_LINKS));
        assertFalse(Files.exists(repoDir().resolve("refs").resolve("main")));
    }

    @Test
    void aStalledTransferFailsInsteadOfHanging() {
        hub.stall = new CountDownLatch(1);
        FsException e = assertThrows(FsException.class,
                () -> resolve(environment(), REPO, Duration.ofMillis(500)));
        assertOneLine(e);
        assertTrue(e.getMessage().contains("no data for 0.500 s"), e.getMessage());
    }

    @Test
    void offlineWithoutTheModelCachedSaysHowToGetIt() {
        FsException e = assertThrows(FsException.class, () -> resolve(environment("HF_HUB_OFFLINE", "1")));
        assertOneLine(e);
        assertTrue(e.getMessage().startsWith(REPO + " is not in the Hugging Face cache (" + repoDir() + ")"),
                e.getMessage());
        assertTrue(e.getMessage().endsWith(" and HF_HUB_OFFLINE is set: run 'fs pull " + REPO + "' when online (with "
                + "HF_HUB_OFFLINE unset), or pass a local directory"), e.getMessage());
        assertTrue(hub.requests.isEmpty(), "offline means no request: " + hub.requests);
    }

    @Test
    void offlineWithTheModelCachedWorks() {
        Path snapshot = resolve(environment());
        int requests = hub.requests.size();
        assertEquals(snapshot, resolve(environment("HF_HUB_OFFLINE", "1")));
        assertEquals(requests, hub.requests.size());
    }

    @Test
    void offlineWithAPartialCacheNamesWhatIsMissing() throws IOException {
        resolve(environment());
        Files.delete(repoDir().resolve("snapshots").resolve(FakeHub.COMMIT).resolve("tokenizer.json"));
        FsException e = assertThrows(FsException.class, () -> resolve(environment("HF_HUB_OFFLINE", "true")));
        assertTrue(e.getMessage().contains("only partly in the Hugging Face cache")
                && e.getMessage().contains("lacks tokenizer.json"), e.getMessage());
        // Online, only the missing file is asked about; its blob is still there, so it is linked, not downloaded.
        int requests = hub.requests.size();
        Path snapshot = resolve(environment());
        assertEquals(List.of("HEAD /" + REPO + "/resolve/main/config.json",
                "HEAD /" + REPO + "/resolve/" + FakeHub.COMMIT + "/tokenizer.json"),
                hub.requests.subList(requests, hub.requests.size()));
        assertArrayEquals(hub.content("tokenizer.json"), Files.readAllBytes(snapshot.resolve("tokenizer.json")));
    }

    @Test
    void anUnreachableEndpointIsReportedAsThatWithHowToGetTheModel() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        FsException e = assertThrows(FsException.class,
                () -> resolve(environment("HF_ENDPOINT", "http://127.0.0.1:" + closedPort)));
        assertOneLine(e);
        String message = e.getMessage();
        assertTrue(message.startsWith(REPO + " is not in the Hugging Face cache (" + repoDir()
                + ") and could not be downloaded (cannot connect"), message);
        // HF_ENDPOINT names a hub of the user's own: the internet is not what is missing.
        assertTrue(message.endsWith("HF_ENDPOINT (http://127.0.0.1:" + closedPort + ") cannot be reached: check it "
                + "and run again (downloads resume), or pass a local directory"), message);
    }

    @Test
    void theTokenGoesToTheHubAsABearerButNotToTheCdn() {
        hub.requiredToken = "hf_secret";
        FsException e = assertThrows(FsException.class, () -> resolve(environment()));
        assertOneLine(e);
        assertTrue(e.getMessage().contains("HTTP 401") && e.getMessage().contains("set HF_TOKEN"), e.getMessage());

        Path snapshot = resolve(environment("HF_TOKEN", "hf_secret"));
        assertTrue(Files.isRegularFile(snapshot.resolve("model.safetensors")));
        assertFalse(hub.hubAuthorizations.isEmpty());
        assertTrue(hub.hubAuthorizations.stream().allMatch("Bearer hf_secret"::equals), hub.hubAuthorizations.toString());
        assertTrue(hub.cdnAuthorizations.isEmpty(), "the token must not leave the hub's host");
    }

    @Test
    void aShardedCheckpointDownloadsTheIndexAndEveryShard() throws IOException {
        hub.close();
        byte[] first = new byte[200_000];
        byte[] second = new byte[150_000];
        new Random(2).nextBytes(first);
        new Random(3).nextBytes(second);
        hub = new FakeHub(REPO)
                .file("config.json", "{}")
                .file("generation_config.json", "{\"do_sample\": true}")
                .file("tokenizer.json", "{}")
                .file("tokenizer_config.json", "{}")
                .file("model.safetensors.index.json", """
                        {"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors",
                         "b": "model-00002-of-00002.safetensors", "c": "model-00001-of-00002.safetensors"}}""")
                .lfsFile("model-00001-of-00002.safetensors", first)
                .lfsFile("model-00002-of-00002.safetensors", second);
        Path snapshot = resolve(environment());
        assertArrayEquals(first, Files.readAllBytes(snapshot.resolve("model-00001-of-00002.safetensors")));
        assertArrayEquals(second, Files.readAllBytes(snapshot.resolve("model-00002-of-00002.safetensors")));
        assertEquals("{\"do_sample\": true}", Files.readString(snapshot.resolve("generation_config.json")));
        assertFalse(Files.exists(snapshot.resolve("model.safetensors")));
    }

    @Test
    void aShardIndexCannotWriteOutsideTheSnapshot() throws IOException {
        hub.close();
        hub = new FakeHub(REPO).file("config.json", "{}").file("tokenizer.json", "{}")
                .file("tokenizer_config.json", "{}")
                .file("model.safetensors.index.json", "{\"weight_map\": {\"a\": \"../../escape\"}}");
        FsException e = assertThrows(FsException.class, () -> resolve(environment()));
        assertTrue(e.getMessage().contains("not a plain file name"), e.getMessage());
        assertFalse(hub.requests.stream().anyMatch(r -> r.contains("escape")), hub.requests.toString());
    }

    @Test
    void aRepoWithoutConfigJsonIsNotAModel() {
        FsException e = assertThrows(FsException.class, () -> resolve(environment(), "acme/nothing-here"));
        assertOneLine(e);
        assertTrue(e.getMessage().contains("has no config.json"), e.getMessage());
    }

    @Test
    void whatIsNeitherADirectoryNorARepoIdIsRejectedUpFront() {
        for (String model : List.of("not a repo", "a/b/c", "-x/y", "x/y-", "a--b/c", "a/b..c", "", "/no/such/dir")) {
            FsException e = assertThrows(FsException.class, () -> resolve(environment(), model), model);
            assertTrue(e.getMessage().contains("is not a directory and not a Hugging Face repo id"), e.getMessage());
        }
        assertTrue(hub.requests.isEmpty());
    }

    @Test
    void aMissingNameInAnExistingFolderIsAMistypedPathAnsweredWithTheNearestEntry() throws IOException {
        Path models = Files.createDirectories(temp.resolve("models"));
        Files.createDirectories(models.resolve("tiny-tied"));
        Files.createDirectories(models.resolve("tiny-moe"));
        Files.writeString(models.resolve("tiny.gguf"), "GGUF");

        FsException directory = assertThrows(FsException.class,
                () -> resolve(environment(), models.resolve("tiny-tiedd").toString()));
        assertEquals(models.resolve("tiny-tiedd") + ": no such directory (did you mean " + models.resolve("tiny-tied")
                + "?)", directory.getMessage());
        FsException file = assertThrows(FsException.class,
                () -> resolve(environment(), models.resolve("tiny.ggfu.gguf").toString()));
        assertEquals(models.resolve("tiny.ggfu.gguf") + ": no such file (did you mean " + models.resolve("tiny.gguf")
                + "?)", file.getMessage());
        FsException nothingNear = assertThrows(FsException.class,
                () -> resolve(environment(), models.resolve("qwen3").toString()));
        assertEquals(models.resolve("qwen3") + ": no such directory", nothingNear.getMessage());
        assertTrue(hub.requests.isEmpty());
    }

    @Test
    void editDistanceCountsInsertionsDeletionsAndReplacements() {
        assertEquals(0, MissingPath.editDistance("tiny-tied", "tiny-tied"));
        assertEquals(1, MissingPath.editDistance("tiny-tiedd", "tiny-tied"));
        assertEquals(2, MissingPath.editDistance("tiny-moe", "tiny-tie"));
        assertEquals(3, MissingPath.editDistance("kitten", "sitting"));
        assertEquals(3, MissingPath.editDistance("", "abc"));
        assertEquals(3, MissingPath.editDistance("abc", ""));
    }

    @Test
    void aLocalDirectoryIsUsedAsItIsAndMustHoldConfigJson() throws IOException {
        Path model = Files.createDirectories(temp.resolve("my-model"));
        FsException e = assertThrows(FsException.class, () -> resolve(environment(), model.toString()));
        assertEquals(model + " has no config.json: not a Hugging Face model directory", e.getMessage());
        Files.writeString(model.resolve("config.json"), "{}");
        assertEquals(model, resolve(environment(), model.toString()));
        Path file = Files.writeString(temp.resolve("weights.bin"), "x");
        assertTrue(assertThrows(FsException.class, () -> resolve(environment(), file.toString()))
                .getMessage().contains("is a file, not a model directory"));
        assertTrue(hub.requests.isEmpty());
    }

    @Test
    void theCacheIsWhereHuggingFaceHubPutsIt() {
        assertEquals(Path.of("/c"), HubCache.locate(Map.of("HF_HUB_CACHE", "/c", "HF_HOME", "/h")).root());
        assertEquals(Path.of("/h/hub"), HubCache.locate(Map.of("HF_HOME", "/h", "XDG_CACHE_HOME", "/x")).root());
        assertEquals(Path.of("/x/huggingface/hub"), HubCache.locate(Map.of("XDG_CACHE_HOME", "/x")).root());
        assertEquals(Path.of("/home/u/.cache/huggingface/hub"), HubCache.locate(Map.of("HOME", "/home/u")).root());
    }

    private static final String GGUF_REPO = "acme/Tiny-GGUF";

    /** A GGUF repo as Qwen's are laid out: one file per quantization, plus a README. */
    private FakeHub ggufHub(String... ggufFiles) throws IOException {
        hub.close();
        hub = new FakeHub(GGUF_REPO).file("README.md", "# Tiny");
        Random random = new Random(2);
        for (String file : ggufFiles) {
            byte[] content = new byte[100_000 + random.nextInt(1000)];
            random.nextBytes(content);
            hub.lfsFile(file, content);
        }
        return hub;
    }

    private Path ggufRepoDir() {
        return cacheRoot.resolve("models--acme--Tiny-GGUF");
    }

    @Test
    void aQuantTagFetchesThatOneGgufFileIntoTheCacheAndReusesIt() throws IOException {
        ggufHub("Tiny-Q8_0.gguf", "Tiny-BF16.gguf", "Tiny-Q4_K_M.gguf");
        Path file = resolve(environment(), GGUF_REPO + ":q8_0");

        assertEquals(ggufRepoDir().resolve("snapshots").resolve(FakeHub.COMMIT).resolve("Tiny-Q8_0.gguf"), file);
        assertTrue(Files.isSymbolicLink(file));
        assertArrayEquals(hub.content("Tiny-Q8_0.gguf"), Files.readAllBytes(file));
        assertEquals(FakeHub.COMMIT, Files.readString(ggufRepoDir().resolve("refs").resolve("main")));
        List<String> cdn = hub.requests.stream().filter(r -> r.contains(" cdn/")).toList();
        assertEquals(List.of("GET cdn/blobs/" + FakeHub.sha256(hub.content("Tiny-Q8_0.gguf"))), cdn,
                "only the tagged file is downloaded");

        int requests = hub.requests.size();
        assertEquals(file, resolve(environment(), GGUF_REPO + ":Q8_0"));
        assertEquals(requests, hub.requests.size(), "the cached file is used without asking the hub");
        assertEquals(file, resolve(environment("HF_HUB_OFFLINE", "1"), GGUF_REPO + ":Q8_0"));

        Path other = resolve(environment(), GGUF_REPO + ":BF16");
        assertArrayEquals(hub.content("Tiny-BF16.gguf"), Files.readAllBytes(other));
    }

    @Test
    void aMissingOrAmbiguousTagNamesWhatTheRepoHas() throws IOException {
        ggufHub("Tiny-Q8_0.gguf", "Tiny-BF16.gguf", "Tiny-Q4_K_M.gguf");
        FsException missing = assertThrows(FsException.class, () -> resolve(environment(), GGUF_REPO + ":Q2_K"));
        assertOneLine(missing);
        assertEquals(GGUF_REPO + " has no GGUF file for the tag 'Q2_K' (its tags: Q8_0, BF16, Q4_K_M)",
                missing.getMessage());

        ggufHub("Tiny-Q8_0.gguf", "Other-Q8_0.gguf");
        FsException ambiguous = assertThrows(FsException.class, () -> resolve(environment(), GGUF_REPO + ":Q8_0"));
        assertOneLine(ambiguous);
        assertEquals(GGUF_REPO + ":Q8_0: the tag 'Q8_0' names 2 GGUF files on the hub (Tiny-Q8_0.gguf, "
                + "Other-Q8_0.gguf): give the whole tag of one, or its path", ambiguous.getMessage());

        ggufHub();
        FsException none = assertThrows(FsException.class, () -> resolve(environment(), GGUF_REPO + ":Q8_0"));
        assertEquals(GGUF_REPO + " has no GGUF file for the tag 'Q8_0' (it has no .gguf files at all)", none.getMessage());
        assertFalse(Files.exists(ggufRepoDir().resolve("refs")), "nothing was cached");
    }

    @Test
    void aQuantTagOfflineOrOfAMissingRepoIsOneLine() throws IOException {
        ggufHub("Tiny-Q8_0.gguf");
        FsException offline = assertThrows(FsException.class,
                () -> resolve(environment("HF_HUB_OFFLINE", "1"), GGUF_REPO + ":Q8_0"));
        assertOneLine(offline);
        assertTrue(offline.getMessage().startsWith(GGUF_REPO + ":Q8_0 is not in the Hugging Face cache (")
                && offline.getMessage().endsWith("HF_HUB_OFFLINE is set: run 'fs pull " + GGUF_REPO + ":Q8_0' when "
                + "online (with HF_HUB_OFFLINE unset), or pass the path of a .gguf file"), offline.getMessage());
        assertTrue(hub.requests.isEmpty());

        FsException absent = assertThrows(FsException.class, () -> resolve(environment(), "acme/absent:Q8_0"));
        assertOneLine(absent);
        assertEquals("acme/absent: the Hugging Face hub has no such repo: check the repo id; it is not a local file"
                + " either", absent.getMessage());
    }

    @Test
    void aLocalGgufFileIsUsedAsItIs() throws IOException {
        Path named = Files.writeString(temp.resolve("model.GGUF"), "not checked here");
        assertEquals(named, resolve(environment(), named.toString()));
        Path byMagic = Files.write(temp.resolve("model.bin"), new byte[] {'G', 'G', 'U', 'F', 3, 0, 0, 0});
        assertEquals(byMagic, resolve(environment(), byMagic.toString()));
        FsException absent = assertThrows(FsException.class, () -> resolve(environment(), temp + "/absent.gguf"));
        assertEquals(temp + "/absent.gguf: no such file", absent.getMessage());
        assertTrue(hub.requests.isEmpty());
    }

    @Test
    void quantTagsMatchTheEndOfAGgufFilesName() {
        GgufTag tag = GgufTag.parse("Qwen/Qwen3-0.6B-GGUF:Q4_K_M").orElseThrow();
        assertEquals(new RepoId("Qwen", "Qwen3-0.6B-GGUF"), tag.repo());
        assertTrue(tag.matches("Qwen3-0.6B-Q4_K_M.gguf"));
        assertTrue(tag.matches("sub/qwen3-0.6b.q4_k_m.GGUF"));
        assertTrue(tag.matches("Q4_K_M.gguf"));
        assertFalse(tag.matches("Qwen3-0.6B-Q4_K_M.gguf.part"));
        assertFalse(tag.matches("Qwen3-0.6B-IQ4_K_M.gguf"));
        assertFalse(tag.matches("Qwen3-0.6B-Q4_K_M-00001-of-00002.gguf"));
        assertEquals("Q4_K_M", GgufTag.tagOf("Qwen3-0.6B-Q4_K_M-00001-of-00002.gguf"));
        assertEquals("Q8_0", GgufTag.tagOf("llama-2-7b.Q8_0.gguf"));
        assertEquals(null, GgufTag.tagOf("README.md"));
        for (String notTagged : List.of("Qwen/Qwen3-0.6B", "Qwen/Qwen3:", "Qwen:Q8_0", "a/b:Q8 0", "a/b/c:Q8_0")) {
            assertTrue(GgufTag.parse(notTagged).isEmpty(), notTagged);
        }
    }
}
