package fs.cli;

import fs.FsException;
import fs.hub.ModelResolver;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Downloads a model into the Hugging Face cache without running it (Ollama's and llama.cpp's pull). */
@Command(name = "pull", mixinStandardHelpOptions = true,
        description = "Downloads a model into the Hugging Face cache (resumable, sha256-checked) and prints where it is.")
final class PullCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODEL",
            description = "A Hugging Face repo id (Qwen/Qwen3-0.6B) or repo:QUANT for one GGUF file of a repo.")
    String model;

    @Override
    public Integer call() {
        if (isLocal(model)) throw new FsException(model + " is a local path: there is nothing to pull");
        Path path = ModelResolver.resolve(model, spec.commandLine().getErr());
        spec.commandLine().getOut().println(path);
        spec.commandLine().getOut().flush();
        return 0;
    }

    private static boolean isLocal(String model) {
        try {
            return !model.isBlank() && Files.exists(Path.of(model));
        } catch (InvalidPathException e) {
            return false;
        }
    }
}
