package fs.langchain4j;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.output.Response;
import dev.langchain4j.model.scoring.ScoringModel;
import fs.api.FsModel;
import fs.api.Ranked;
import fs.api.RerankParams;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * LangChain4j's {@link ScoringModel} on a reranker (Qwen3-Reranker) loaded in this JVM: each segment's relevance to
 * the query, P("yes") in the model card's prompt, all of a call's segments batched through the model between the
 * chats' steps ({@link FsModel#rerank}) with {@code params}' instruction and truncation. Thread-safe; closing the
 * {@link FsModel} is the caller's.
 */
public final class FsScoringModel implements ScoringModel {
    private final FsModel model;
    private final RerankParams params;

    /** Scores with {@code model} as {@code params} say; their topN is ignored: every segment gets its score. */
    public FsScoringModel(FsModel model, RerankParams params) {
        this.model = Objects.requireNonNull(model, "model");
        this.params = Objects.requireNonNull(params, "params").withTopN(0);
    }

    /**
     * Each segment's score, 0..1, in the segments' order (as LangChain4j's re-ranking expects).
     *
     * @throws fs.FsException for a model that cannot score, an empty query or text, a prompt longer than the context
     */
    @Override
    public Response<List<Double>> scoreAll(List<TextSegment> segments, String query) {
        List<Ranked> ranked = model.rerank(query, segments.stream().map(TextSegment::text).toList(), params);
        Double[] scores = new Double[segments.size()];
        for (Ranked r : ranked) scores[r.index()] = r.relevance();
        return Response.from(Arrays.asList(scores));
    }
}
