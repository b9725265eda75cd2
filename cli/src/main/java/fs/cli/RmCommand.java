package fs.cli;

import fs.FsException;
import fs.hub.CachedModels;
import fs.hub.CachedModels.CachedModel;
import fs.hub.RepoId;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Deletes a model from the Hugging Face cache (Ollama's rm). */
@Command(name = "rm", mixinStandardHelpOptions = true,
        description = "Deletes a model repo from the Hugging Face cache (every revision and file of it).")
final class RmCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "1..*", paramLabel = "REPO", description = "Hugging Face repo ids, e.g. Qwen/Qwen3-0.6B.")
    java.util.List<String> repos;

    @Override
    public Integer call() {
        CachedModels cache = CachedModels.in(System.getenv());
        for (String name : repos) {
            RepoId repo = RepoId.parse(name).orElseThrow(() -> new FsException("'" + name + "' is not a Hugging Face "
                    + "repo id (owner/name; `fs list` shows the cached ones)"));
            CachedModel removed = cache.remove(repo);
            spec.commandLine().getOut().println("deleted " + removed.repo() + " (" + removed.size() + ")");
            spec.commandLine().getOut().flush();
        }
        return 0;
    }
}
