package fs.springai;

import fs.FsException;
import fs.api.EmbedParams;
import fs.api.FsModel;
import java.util.List;
import java.util.Objects;
import org.springframework.ai.chat.metadata.DefaultUsage;
import org.springframework.ai.document.Document;
import org.springframework.ai.embedding.Embedding;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.ai.embedding.EmbeddingRequest;
import org.springframework.ai.embedding.EmbeddingResponse;
import org.springframework.ai.embedding.EmbeddingResponseMetadata;

/**
 * Spring AI's {@link EmbeddingModel} on an embedding model (Qwen3-Embedding) loaded in this JVM: each request's texts
 * are embedded together, batched through the model between the chats' steps ({@link FsModel#embed}), as
 * {@code params} say; a request's dimensions option, when set, replaces theirs. Qwen3-Embedding embeds queries with
 * an instruction and documents without: give the retriever one with {@link EmbedParams#withQueryTask} and the
 * ingestion one without. Thread-safe; closing the {@link FsModel} is the caller's.
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
     * The embedding of each text (unit vectors), in order; the usage's prompt tokens count the tokens the model ran.
     *
     * @throws FsException for a model that does not embed, an empty text or one longer than the context
     */
    @Override
    public EmbeddingResponse call(EmbeddingRequest request) {
        EmbedParams asked = params;
        if (request.getOptions() != null && request.getOptions().getDimensions() != null) {
            asked = asked.withDimensions(request.getOptions().getDimensions());
        }
        List<fs.api.Embedding> embedded = model.embed(request.getInstructions(), asked);
        int tokens = embedded.stream().mapToInt(fs.api.Embedding::tokens).sum();
        return new EmbeddingResponse(embedded.stream().map(e -> new Embedding(e.vector(), e.index())).toList(),
                new EmbeddingResponseMetadata("", new DefaultUsage(tokens, 0)));
    }

    /** The embedding of the document's text. */
    @Override
    public float[] embed(Document document) {
        String text = getEmbeddingContent(document);
        if (text == null) throw new FsException("fs embeds text only: the document " + document.getId() + " has none");
        return embed(text);
    }

    /** The length of the vectors: the dimensions asked for, else the model's hidden size (nothing is run). */
    @Override
    public int dimensions() {
        return params.dimensions() > 0 ? params.dimensions() : model.embeddingSize();
    }
}
