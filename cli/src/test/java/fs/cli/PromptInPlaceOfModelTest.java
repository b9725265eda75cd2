package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code fs run "Why is the sky blue?"}: words that cannot name a model are the prompt for the default model, as with
 * {@code -p}; whatever could be a model, mistyped or not, stays the model.
 */
class PromptInPlaceOfModelTest {
    @TempDir
    Path workingDirectory;

    @ParameterizedTest
    @ValueSource(strings = {"Why is the sky blue?", "Hello\nthere", "  tell me a joke  ", "What is 1/2 of 10?",
            "Summarize: models/tiny-tied is a test model"})
    void wordsThatNameNoModelAreAPrompt(String argument) {
        assertTrue(ModelOptions.readsAsPrompt(argument, workingDirectory), argument);
    }

    @ParameterizedTest
    @ValueSource(strings = {"Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B-GGUF:Q8_0", " Qwen/Qwen3-0.6B ", "hello",
            "models/tiny-tied", "Qwen/Qwen3 0.6B", "Qwen/Qwen3-0.6B-GGUF:Q8_0 -n 8", "/models/my qwen",
            "./my models/qwen", "../my models", "~/my models/qwen", "my model.gguf", "My Model.GGUF", ""})
    void whatCouldBeAModelStaysTheModel(String argument) {
        assertFalse(ModelOptions.readsAsPrompt(argument, workingDirectory), argument);
    }

    @Test
    void aFileOrDirectoryWithASpaceInItsNameIsTheModel(@TempDir Path elsewhere) throws IOException {
        Files.createDirectory(workingDirectory.resolve("my models"));
        assertFalse(ModelOptions.readsAsPrompt("my models", workingDirectory));
        assertTrue(ModelOptions.readsAsPrompt("my models", elsewhere), "where no such directory is, words");
    }

    /**
     * Offline with an empty cache, the default model cannot be found: that the error names it shows the words were
     * taken as the prompt, and it is the error of {@code fs run -p TEXT}.
     */
    @Test
    void theWordsArePromptForTheDefaultModel(@TempDir Path cache) throws Exception {
        Map<String, String> offline = Map.of("HF_HUB_OFFLINE", "1", "HF_HUB_CACHE", cache.toString());
        CliRun words = CliRun.inChildJvm(offline, "run", "Why is the sky blue?", "-n", "1");
        assertEquals(1, words.exitCode(), words.err());
        assertEquals("", words.out());
        assertEquals(1, words.err().strip().lines().count(), words.err());
        assertTrue(words.err().startsWith("fs: " + ModelOptions.DEFAULT_MODEL + " is not in the Hugging Face cache ("
                + cache), words.err());
        CliRun flag = CliRun.inChildJvm(offline, "run", "-p", "Why is the sky blue?", "-n", "1");
        assertEquals(words, flag);
    }

    @Test
    void withAPromptGivenTheWordsAreTheModel() {
        CliRun run = CliRun.of("run", "Why is the sky blue?", "-p", "Hello");
        assertEquals(1, run.exitCode(), run.err());
        assertEquals("fs: 'Why is the sky blue?' is not a directory and not a Hugging Face repo id (owner/name, e.g. "
                + "Qwen/Qwen3-0.6B)", run.err().strip());
    }

    @Test
    void aMistypedPathWithASpaceIsStillTheModel() {
        CliRun run = CliRun.of("run", "./my models/qwen");
        assertEquals(2, run.exitCode(), run.err());
        assertTrue(run.err().startsWith("fs: no prompt: give it after the model (fs run MODEL PROMPT)"), run.err());
    }
}
