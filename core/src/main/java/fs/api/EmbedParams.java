package fs.api;

import fs.FsException;

/**
 * How {@link FsModel#embed} embeds.
 *
 * @param dimensions the first entries kept, normalized again (Matryoshka; the model card allows it); 0: all of them
 * @param queryTask  null for documents; else the texts are queries, in the model card's form
 *                   {@code Instruct: {task}\nQuery:{text}} (e.g. "Given a web search query, retrieve relevant
 *                   passages that answer the query")
 * @param truncate   whether an input longer than the context keeps its first tokens rather than failing
 */
public record EmbedParams(int dimensions, String queryTask, boolean truncate) {
    /** Checks the dimensions. */
    public EmbedParams {
        if (dimensions < 0) throw new FsException("dimensions must be ≥ 0 (0: all), got " + dimensions);
    }

    /** Every dimension, documents, no truncation. */
    public static EmbedParams defaults() {
        return new EmbedParams(0, null, false);
    }

    public EmbedParams withDimensions(int value) {
        return new EmbedParams(value, queryTask, truncate);
    }

    public EmbedParams withQueryTask(String value) {
        return new EmbedParams(dimensions, value, truncate);
    }

    public EmbedParams withTruncate(boolean value) {
        return new EmbedParams(dimensions, queryTask, value);
    }
}
