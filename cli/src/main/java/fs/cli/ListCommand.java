package fs.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import fs.hub.CachedModels;
import fs.hub.CachedModels.CachedModel;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The models in the Hugging Face cache, one line each (Ollama's list). */
@Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
        description = "Lists the models in the Hugging Face cache: repo, revision, size on disk, format.")
final class ListCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--json", description = "Print a JSON array instead of a table.")
    boolean json;

    @Override
    public Integer call() throws JsonProcessingException {
        CachedModels cache = CachedModels.in(System.getenv());
        List<CachedModel> models = cache.list();
        if (models.isEmpty() && !json) {
            spec.commandLine().getErr().println("fs: no models in the Hugging Face cache (" + cache.root() + ")");
            return 0;
        }
        print(models, json, spec.commandLine().getOut());
        return 0;
    }

    /** The table (or JSON array) of {@code models} on {@code out}. */
    static void print(List<CachedModel> models, boolean json, PrintWriter out) throws JsonProcessingException {
        if (json) {
            ArrayNode array = JsonNodeFactory.instance.arrayNode();
            for (CachedModel m : models) {
                var node = array.addObject();
                node.put("repo", m.repo().toString());
                node.put("commit", m.commit());
                node.put("bytes", m.bytes());
                node.put("format", m.format());
                m.files().forEach(node.putArray("files")::add);
            }
            out.println(new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(array));
        } else {
            int width = Math.max("REPO".length(), models.stream().mapToInt(m -> m.repo().toString().length()).max().orElse(0));
            String row = "%-" + width + "s  %-8s  %9s  %s%n";
            out.printf(Locale.ROOT, row, "REPO", "REVISION", "SIZE", "FORMAT");
            for (CachedModel m : models) out.printf(Locale.ROOT, row, m.repo(), m.revision(), m.size(), m.format());
        }
        out.flush();
    }
}
