/**
 * A LangChain4j provider over {@link fs.api.FsModel}: {@link fs.langchain4j.FsChatModel} ({@code ChatModel}) and
 * {@link fs.langchain4j.FsStreamingChatModel} ({@code StreamingChatModel}, with Qwen3's reasoning delivered through
 * {@code onPartialThinking}); for retrieval, {@link fs.langchain4j.FsEmbeddingModel} ({@code EmbeddingModel}) and
 * {@link fs.langchain4j.FsScoringModel} ({@code ScoringModel}). The model runs in this JVM; no server is involved.
 */
package fs.langchain4j;
