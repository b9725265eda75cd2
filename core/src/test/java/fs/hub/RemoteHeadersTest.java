package fs.hub;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.model.TinyQwen3;
import fs.safetensors.SafetensorsWriter;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ModelResolver.remoteHeaders against a fake hub: what is read, what is stored, and how each failure reads. */
class RemoteHeadersTest {
    private static final String REPO = "acme/Tiny-0.1B";

    @TempDir
    Path temp;

    private FakeHub hub;
    private final StringWriter log = new StringWriter();

    @AfterEach
    void stopHub() {
        if (hub != null) hub.close();
    }

    /** A hub serving the tiny tied model's small files; the weights are added by each test. */
    private FakeHub smallFiles() throws IOException {
        hub = new FakeHub(REPO)
                .file("config.json", TinyQwen3.configJson(true))
                .file("tokenizer.json", "{\"model\": {}}")
                .file("tokenizer_config.json", "{\"eos_token\": \"<|im_end|>\"}");
        return hub;
    }

    private byte[] tinyWeights() throws IOException {
        return Files.readAllBytes(TinyQwen3.writeTied(temp.resolve("local")).resolve("model.safetensors"));
    }

    private Map<String, String> environment(String... extra) {
        Map<String, String> env = new HashMap<>(Map.of("HF_HUB_CACHE", cacheRoot().toString(),
                "HF_ENDPOINT", hub.endpoint()));
        for (int i = 0; i < extra.length; i += 2) env.put(extra[i], extra[i + 1]);
        return env;
    }

    private ModelResolver resolver(Map<String, String> environment) {
        return new ModelResolver(environment, new PrintWriter(log, true), false, Duration.ofSeconds(20));
    }

    private Optional<RemoteHeaders> remoteHeaders(String model) {
        return resolver(environment()).remoteHeaders(model);
    }

    private Path cacheRoot() {
        return temp.resolve("hub-cache");
    }

    private Path snapshot() {
        return cacheRoot().resolve("models--acme--Tiny-0.1B").resolve("snapshots").resolve(FakeHub.COMMIT);
    }

    /** The header size a safetensors file starts with, decoded here rather than by the code under test. */
    private static long headerSize(byte[] file) {
        return ByteBuffer.wrap(file, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    private static void assertOneLine(FsException e) {
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
    }

    @Test
    void readsOnlyTheHeaderOfASingleWeightsFile() throws IOException {
        byte[] weights = tinyWeights();
        smallFiles().lfsFile("model.safetensors", weights);

        RemoteHeaders remote = remoteHeaders(REPO).orElseThrow();

        long header = headerSize(weights);
        assertEquals(List.of("bytes=0-7", "bytes=8-" + (8 + header - 1)), hub.cdnRanges);
        assertEquals(8 + header, hub.cdnBytesServed.get(), "the size field and the header, nothing of the data");
        assertTrue(8 + header < weights.length);
        assertEquals(8 + header, remote.bytesRead());
        assertEquals(weights.length, remote.totalSize());

        assertEquals(FakeHub.COMMIT, remote.commit());
        assertEquals(snapshot(), remote.snapshot());
        assertEquals(1, remote.files().size());
        assertEquals("model.safetensors", remote.files().getFirst().name());
        Map<String, long[]> expected = TinyQwen3.shapes();
        expected.remove("lm_head.weight");
        assertShapes(expected, remote.tensors());

        assertEquals(TinyQwen3.configJson(true), Files.readString(snapshot().resolve("config.json")));
        assertTrue(Files.exists(cacheRoot().resolve("models--acme--Tiny-0.1B").resolve(".no_exist")
                .resolve(FakeHub.COMMIT).resolve("generation_config.json")), "asked for, and its absence remembered");
        assertFalse(Files.exists(snapshot().resolve("model.safetensors")), "the weights stay on the hub");
        assertFalse(Files.exists(cacheRoot().resolve("models--acme--Tiny-0.1B").resolve("blobs")
                .resolve(FakeHub.sha256(weights))));
    }

    private static void assertShapes(Map<String, long[]> expected, List<Tensor> tensors) {
        Map<String, long[]> actual = new LinkedHashMap<>();
        for (Tensor tensor : tensors) {
            assertEquals(DType.BF16, tensor.dtype(), tensor.name());
            assertEquals(0, tensor.data().byteSize(), "header-only: no data");
            actual.put(tensor.name(), tensor.shape());
        }
        assertEquals(expected.keySet(), actual.keySet());
        expected.forEach((name, shape) -> assertArrayEquals(shape, actual.get(name), name));
    }

    /** The tiny tied model in two shards, the index listing {@code extraEntries} besides its tensors. */
    private byte[][] shardedHub(Map<String, long[]> shapes, String extraEntries) throws IOException {
        SafetensorsWriter first = new SafetensorsWriter();
        SafetensorsWriter second = new SafetensorsWriter();
        StringBuilder weightMap = new StringBuilder();
        int i = 0;
        for (var entry : shapes.entrySet()) {
            boolean inFirst = i++ < shapes.size() / 2;
            (inFirst ? first : second).zeros(entry.getKey(), DType.BF16, entry.getValue());
            weightMap.append(weightMap.isEmpty() ? "" : ", ").append('"').append(entry.getKey()).append("\": \"")
                    .append(inFirst ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors")
                    .append('"');
        }
        first.write(temp.resolve("one"));
        second.write(temp.resolve("two"));
        byte[] one = Files.readAllBytes(temp.resolve("one"));
        byte[] two = Files.readAllBytes(temp.resolve("two"));
        smallFiles().file("model.safetensors.index.json", "{\"weight_map\": {" + weightMap + extraEntries + "}}")
                .lfsFile("model-00002-of-00002.safetensors", two)
                .lfsFile("model-00001-of-00002.safetensors", one);
        return new byte[][] {one, two};
    }

    @Test
    void readsTheIndexThenEachShardsHeader() throws IOException {
        Map<String, long[]> shapes = TinyQwen3.shapes();
        shapes.remove("lm_head.weight");
        byte[][] shards = shardedHub(shapes, "");
        byte[] one = shards[0];
        byte[] two = shards[1];

        RemoteHeaders remote = remoteHeaders(REPO).orElseThrow();

        assertEquals(List.of("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"),
                remote.files().stream().map(RemoteHeaders.WeightsFile::name).toList());
        assertEquals(16 + headerSize(one) + headerSize(two), hub.cdnBytesServed.get());
        assertEquals(one.length + two.length, remote.totalSize());
        assertShapes(shapes, remote.tensors());
        assertTrue(Files.isRegularFile(snapshot().resolve("model.safetensors.index.json")), "the index is cached");
    }

    @Test
    void aTensorTheIndexPlacesInAShardWithoutItIsRefusedAsLocally() throws IOException {
        Map<String, long[]> shapes = TinyQwen3.shapes();
        shapes.remove("lm_head.weight");
        shardedHub(shapes, ", \"model.extra.weight\": \"model-00002-of-00002.safetensors\"");

        FsException e = assertThrows(FsException.class, () -> remoteHeaders(REPO));
        assertOneLine(e);
        assertEquals("acme/Tiny-0.1B/model.safetensors.index.json: tensors listed in weight_map are missing from "
                + "their shards: 'model.extra.weight' is not in model-00002-of-00002.safetensors", e.getMessage());
    }

    @Test
    void aCompletelyCachedRepoIsLeftToTheLocalReaderWithoutARequest() throws IOException {
        smallFiles().lfsFile("model.safetensors", tinyWeights());
        resolver(environment()).resolveModel(REPO);
        int requests = hub.requests.size();

        assertEquals(Optional.empty(), remoteHeaders(REPO));
        assertEquals(Optional.empty(), remoteHeaders(temp.resolve("local").toString()), "a local directory");
        assertEquals(Optional.empty(), remoteHeaders(REPO + ":Q8_0"), "a GGUF tag");
        assertEquals(Optional.empty(), remoteHeaders("no repo id"), "left to resolveModel's error");
        assertEquals(requests, hub.requests.size());
    }

    @Test
    void aHeaderSizeBeyondTheLimitIsOneLineAfterEightBytes() throws IOException {
        byte[] weights = new byte[64];
        ByteBuffer.wrap(weights).order(ByteOrder.LITTLE_ENDIAN).putLong(200L * 1000 * 1000);
        smallFiles().lfsFile("model.safetensors", weights);

        FsException e = assertThrows(FsException.class, () -> remoteHeaders(REPO));
        assertOneLine(e);
        assertEquals("acme/Tiny-0.1B/model.safetensors: header size 200000000 is beyond the 100000000-byte limit "
                + "(corrupt file?)", e.getMessage());
        assertEquals(8, hub.cdnBytesServed.get());
    }

    @Test
    void aHeaderThatDoesNotTileTheFileIsRefusedAsLocally() throws IOException {
        byte[] weights = tinyWeights();
        byte[] longer = Arrays.copyOf(weights, weights.length + 2); // two stray bytes after the last tensor
        smallFiles().lfsFile("model.safetensors", longer);

        FsException e = assertThrows(FsException.class, () -> remoteHeaders(REPO));
        assertOneLine(e);
        assertTrue(e.getMessage().startsWith("acme/Tiny-0.1B/model.safetensors: 2 bytes after the last tensor"),
                e.getMessage());
    }

    @Test
    void aServerThatIgnoresRangeIsReadOnlyAsFarAsNeeded() throws IOException {
        // Large enough that the whole body cannot hide in socket buffers: stopping early shows in the bytes served.
        int elements = 6 * 1024 * 1024;
        new SafetensorsWriter().zeros("big", DType.F32, elements).write(temp.resolve("big.safetensors"));
        byte[] weights = Files.readAllBytes(temp.resolve("big.safetensors"));
        smallFiles().lfsFile("model.safetensors", weights);
        hub.ignoreRange = true;

        RemoteHeaders remote = remoteHeaders(REPO).orElseThrow();

        assertEquals(List.of("big"), remote.tensors().stream().map(Tensor::name).toList());
        assertArrayEquals(new long[] {elements}, remote.tensors().getFirst().shape());
        assertTrue(hub.cdnBytesServed.get() < weights.length,
                hub.cdnBytesServed.get() + " bytes served of " + weights.length);
    }

    @Test
    void aTruncatedAnswerIsOneLine() throws IOException {
        smallFiles().lfsFile("model.safetensors", tinyWeights());
        hub.cutNextTransferAfter = 5;

        FsException e = assertThrows(FsException.class, () -> remoteHeaders(REPO));
        assertOneLine(e);
        assertTrue(e.getMessage().startsWith("acme/Tiny-0.1B is not in the Hugging Face cache"), e.getMessage());
        assertTrue(e.getMessage().contains("could not be downloaded"), e.getMessage());
    }

    @Test
    void aRepoWithoutWeightsIsOneLine() throws IOException {
        smallFiles();

        FsException e = assertThrows(FsException.class, () -> remoteHeaders(REPO));
        assertOneLine(e);
        assertEquals("acme/Tiny-0.1B at commit " + FakeHub.COMMIT + " has no model.safetensors.index.json on the "
                + "Hugging Face hub: not a model repo fs can run", e.getMessage());
    }

    @Test
    void aMissingRepoIsOneLine() throws IOException {
        smallFiles();

        FsException e = assertThrows(FsException.class, () -> remoteHeaders("acme/Nothing-Here"));
        assertOneLine(e);
        assertTrue(e.getMessage().startsWith("acme/Nothing-Here: the Hugging Face hub has no config.json"),
                e.getMessage());
    }

    @Test
    void offlineSaysWhatResolvingSays() throws IOException {
        smallFiles().lfsFile("model.safetensors", tinyWeights());
        Map<String, String> offline = environment("HF_HUB_OFFLINE", "1");

        FsException e = assertThrows(FsException.class, () -> resolver(offline).remoteHeaders(REPO));
        FsException resolving = assertThrows(FsException.class, () -> resolver(offline).resolveModel(REPO));
        assertEquals(resolving.getMessage(), e.getMessage());
        assertTrue(e.getMessage().contains("HF_HUB_OFFLINE is set"), e.getMessage());
        assertTrue(hub.requests.isEmpty());
    }
}
