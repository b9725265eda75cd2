package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import fs.model.TinyQwen3;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fs run models/tiny-tiedd}: a name that is also a repo id's shape but whose folder exists is a mistyped path,
 * answered with the nearest folder there, not with the Hugging Face cache and {@code fs pull}.
 */
class MistypedModelPathTest {
    @TempDir
    Path workingDirectory;

    @Test
    void aMistypedRelativePathNamesTheNearestFolder() throws IOException, InterruptedException {
        TinyQwen3.writeTied(workingDirectory.resolve("models/tiny-tied"));
        Map<String, String> offline = Map.of("HF_HUB_OFFLINE", "1",
                "HF_HUB_CACHE", workingDirectory.resolve("hub").toString());

        CliRun run = CliRun.inChildJvm(workingDirectory, offline, "run", "models/tiny-tiedd", "-p", "hi");

        assertEquals(1, run.exitCode(), run.err());
        assertEquals("", run.out());
        assertEquals("fs: models/tiny-tiedd: no such directory (did you mean models/tiny-tied?)\n", run.err());
    }
}
