package fs.api;

/**
 * One document's score from {@link FsModel#rerank}.
 *
 * @param index     the document's place among those given
 * @param relevance P("yes") in the reranker's prompt, 0..1
 */
public record Ranked(int index, double relevance) {}
