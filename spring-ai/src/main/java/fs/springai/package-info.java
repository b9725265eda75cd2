/**
 * A Spring AI model over {@link fs.api.FsModel}: {@link fs.springai.FsChatModel} ({@code ChatModel}: streaming, tool
 * calls for ChatClient's tool calling advisor, native structured output held by grammar, with
 * {@link fs.springai.FsChatOptions}) and {@link fs.springai.FsEmbeddingModel} ({@code EmbeddingModel}), and
 * {@link fs.springai.FsAutoConfiguration}, Spring Boot's auto-configuration of both from {@code fs.*} properties. The
 * model runs in this JVM; no server is involved.
 */
package fs.springai;
