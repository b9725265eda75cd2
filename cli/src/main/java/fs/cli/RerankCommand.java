package fs.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.embed.Reranker;
import fs.embed.SequenceBatcher;
import fs.engine.LoadedModel;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "rerank", mixinStandardHelpOptions = true,
        description = "Scores each document's relevance to a query, P(yes) in Qwen3-Reranker's prompt, and prints them "
                + "highest first: score, index and document, tab-separated.")
final class RerankCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = {"-q", "--query"}, paramLabel = "QUERY", required = true, description = "The query (required).")
    String query;

    @Parameters(index = "1..*", paramLabel = "DOC", description = "The documents to rank (no default: at least one is required).")
    List<String> documents = new ArrayList<>();

    @Option(names = "--instruct", paramLabel = "INSTRUCTION",
            description = "The instruction of the prompt (default: \"" + Reranker.DEFAULT_INSTRUCTION + "\").")
    String instruction = Reranker.DEFAULT_INSTRUCTION;

    @Option(names = "--top-n", paramLabel = "N", description = "Print only the N best documents (default: all).")
    Integer topN;

    @Option(names = "--json", description = "Print llama-server's (and Jina's) rerank response instead: {\"results\": "
            + "[{\"index\": i, \"relevance_score\": s, \"document\": {\"text\": ...}}]}, highest first.")
    boolean json;

    @Option(names = "--truncate", description = "Cut the end of a document whose prompt is longer than the context "
            + "rather than failing.")
    boolean truncate;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        if (query.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "-q is empty: there is nothing to rank by");
        }
        if (documents.isEmpty()) throw new ParameterException(spec.commandLine(), "no document: give DOC…");
        for (int i = 0; i < documents.size(); i++) {
            if (documents.get(i).isEmpty()) {
                throw new ParameterException(spec.commandLine(), "document " + i + " is empty");
            }
        }
        if (topN != null && topN < 1) {
            throw new ParameterException(spec.commandLine(), "--top-n must be at least 1, got " + topN);
        }
        List<int[][]> prompts = new ArrayList<>(1);
        Reranker[] reranker = new Reranker[1];
        double[] scores;
        try (LoadedModel<SequenceBatcher> loaded = modelOptions.loadWith(source -> {
            // a checkpoint's head is known before upload: a bare one has none (TensorNaming.headless)
            usage(() -> Reranker.check(source.path().toString(), source.pooling(),
                    !source.tensors().names().headless() || source.config().tieWordEmbeddings()));
            reranker[0] = new Reranker(source.tokenizer());
        }, context -> {
            int[][] fitted = usage(() -> reranker[0].prompts(instruction, query, documents, context, truncate));
            prompts.add(fitted);
            int longest = 0;
            for (int[] ids : fitted) longest = Math.max(longest, ids.length);
            int cacheLength = longest;
            return (model, cacheTypes) -> new SequenceBatcher(model, Math.min(EmbedCommand.SLOTS, fitted.length),
                    cacheLength, ModelOptions.PREFILL_BATCH, cacheTypes);
        }, err)) {
            scores = reranker[0].scores(loaded.state(), prompts.getFirst());
        }
        List<Reranker.Score> ranked = Reranker.ranked(scores, topN == null ? 0 : topN);
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            ObjectNode response = new ObjectMapper().createObjectNode();
            response.put("model", modelOptions.model());
            ArrayNode results = response.putArray("results");
            for (Reranker.Score score : ranked) {
                ObjectNode result = results.addObject();
                result.put("index", score.index());
                result.put("relevance_score", score.relevance());
                result.putObject("document").put("text", documents.get(score.index()));
            }
            long tokens = 0;
            for (int[] ids : prompts.getFirst()) tokens += ids.length;
            response.putObject("usage").put("prompt_tokens", tokens).put("total_tokens", tokens);
            out.println(response);
        } else {
            for (Reranker.Score score : ranked) {
                out.printf(Locale.ROOT, "%.6f\t%d\t%s%n", score.relevance(), score.index(),
                        documents.get(score.index()).replace('\n', ' '));
            }
        }
        out.flush();
        return 0;
    }

    /** What the user asked that the model cannot do (a prompt too long, an embedding model) is a usage error. */
    private <T> T usage(Supplier<T> step) {
        try {
            return step.get();
        } catch (FsException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private void usage(Runnable step) {
        usage(() -> {
            step.run();
            return null;
        });
    }
}
