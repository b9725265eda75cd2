package fs.langchain4j;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.output.Response;
import dev.langchain4j.model.output.TokenUsage;
import fs.api.EmbedParams;
import fs.api.FsModel;
import java.util.List;
import java.util.Objects;

/**
 * LangChain4j's {@link EmbeddingModel} on an embedding model (Qwen3-Embedding) loaded in this JVM: each call's texts
 * are embedded together, batched through the model between the chats' steps ({@link FsModel#embed}), as
 * {@code params} say. Qwen3-Embedding embeds queries with an instruction and documents without: give the retriever
 * one with {@link EmbedParams#withQueryTask} and the ingestion one without. Thread-safe; closing the {@link FsModel}
 * is the caller's.
 */
public final class FsEmbeddingModel implements EmbeddingModel {
    private final FsModel model;
    private final EmbedParams params;

    /** Embeds with {@code model} as {@code params} say (dimensions, query task, truncation). */
    public FsEmbeddingModel(FsModel model, EmbedParams params) {
        this.model = Objects.requireNonNull(model, "model");
        this.params = Objects.requireNonNull(params, "params");
    }

    /**
     * The embedding of each segment's text, in order; the token usage counts the tokens the model ran.
     *
     * @throws fs.FsException for a model that does not embed, an empty text or one longer than the context
     */
    @Override
    public Response<List<Embedding>> embedAll(List<TextSegment> segments) {
        List<fs.api.Embedding> embedded = model.embed(segments.stream().map(TextSegment::text).toList(), params);
        int tokens = embedded.stream().mapToInt(fs.api.Embedding::tokens).sum();
        return Response.from(embedded.stream().map(e -> Embedding.from(e.vector())).toList(), new TokenUsage(tokens));
    }

    /** The length of the vectors: the dimensions asked for, else the model's hidden size (nothing is run). */
    @Override
    public int dimension() {
        return params.dimensions() > 0 ? params.dimensions() : model.embeddingSize();
    }
}
