package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.hub.FakeHub;
import fs.model.TinyQwen3;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fs inspect REPO} for a repo not in the cache, run as a process: commands take the hub from the environment
 * (HF_ENDPOINT, HF_HUB_CACHE), and a child process is the one way to give a command an environment of its own. Its
 * listing is compared with {@code fs inspect DIR} of the same files on disk.
 */
class InspectOverHttpTest {
    private static final String REPO = "acme/Tiny-0.1B";

    @TempDir
    Path temp;

    private FakeHub hub;

    @AfterEach
    void stopHub() {
        if (hub != null) hub.close();
    }

    private record Run(int exit, String out, String err) {}

    /** {@code fs ARGS} in a child JVM, with the fake hub and a fresh cache as its environment. */
    private Run fsProcess(String... args) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> command = new ArrayList<>(List.of(java, "--add-modules", "jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), "fs.cli.Main"));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().keySet().removeIf(name -> name.startsWith("HF_"));
        builder.environment().put("HF_ENDPOINT", hub.endpoint());
        builder.environment().put("HF_HUB_CACHE", temp.resolve("hub-cache").toString());
        Process fs = builder.start();
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> {
            try {
                return fs.getErrorStream().readAllBytes();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        String out = new String(fs.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(fs.waitFor(60, TimeUnit.SECONDS), "fs inspect finished");
        return new Run(fs.exitValue(), out, new String(err.join(), StandardCharsets.UTF_8));
    }

    private static Run fsHere(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Run(exit, out.toString(), err.toString());
    }

    private long serve(Path model) throws IOException {
        byte[] weights = Files.readAllBytes(model.resolve("model.safetensors"));
        hub = new FakeHub(REPO)
                .file("config.json", Files.readString(model.resolve("config.json")))
                .lfsFile("model.safetensors", weights);
        return 8 + ByteBuffer.wrap(weights, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    @Test
    void printsTheLocalListingFromTheHeadersAlone() throws Exception {
        Path model = TinyQwen3.writeTied(temp.resolve("tiny"));
        long headerBytes = serve(model);

        Run remote = fsProcess("inspect", REPO);

        assertEquals(0, remote.exit(), remote.err());
        assertEquals(headerBytes, hub.cdnBytesServed.get(), "only the size field and the header");
        List<String> notices = remote.err().lines().filter(l -> l.startsWith("fs: ")).toList();
        assertEquals(List.of(String.format(java.util.Locale.ROOT, "fs: %s is not completely in the Hugging Face cache: read only "
                + "config.json and the safetensors headers (%,d of %,d bytes of weights) from the hub, not the weights",
                REPO, headerBytes, Files.size(model.resolve("model.safetensors")))), notices);
        List<String> lines = remote.out().lines().toList();
        assertEquals("model          " + REPO + " at commit " + FakeHub.COMMIT + " (headers only)", lines.getFirst());

        Run local = fsHere("inspect", model.toString());
        assertEquals(0, local.exit(), local.err());
        // Everything but the first line (what was inspected) is the same: config, tensor table, totals, check.
        assertEquals(local.out().lines().skip(1).toList(), lines.subList(1, lines.size()));
        assertTrue(remote.out().contains("weights        ok"), remote.out());
    }

    @Test
    void jsonSaysHeadersOnlyAndThatATiedHeadWasNotCompared() throws Exception {
        Path model = TinyQwen3.write(temp.resolve("tiny"), true, TinyQwen3.shapes()); // stores lm_head.weight too
        long headerBytes = serve(model);

        Run remote = fsProcess("inspect", REPO, "--json");

        assertEquals(0, remote.exit(), remote.err());
        assertEquals(headerBytes, hub.cdnBytesServed.get());
        JsonNode root = new ObjectMapper().readTree(remote.out());
        assertEquals(REPO, root.get("model").textValue());
        assertEquals(FakeHub.COMMIT, root.get("commit").textValue());
        assertTrue(root.get("headers_only").booleanValue());
        assertEquals(TinyQwen3.shapes().size(), root.get("tensors").size());
        assertEquals("model.safetensors", root.get("tensors").get(0).get("file").textValue());
        String note = "the stored lm_head.weight is not used (tie_word_embeddings is true); whether it equals "
                + "model.embed_tokens.weight is unknown: only the headers were read";
        assertEquals(List.of(note), root.get("weights").get("notes").valueStream().map(JsonNode::textValue).toList());
        assertTrue(remote.err().contains("fs: " + REPO + ": " + note + "\n"), remote.err());

        JsonNode local = new ObjectMapper().readTree(fsHere("inspect", model.toString(), "--json").out());
        assertEquals(local.get("tensors"), root.get("tensors"));
        assertEquals(local.get("totals"), root.get("totals"));
        assertEquals(local.get("config"), root.get("config"));
    }
}
