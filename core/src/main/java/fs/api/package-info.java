/**
 * fs as a library: load a model once, then chat with it from any number of threads.
 *
 * <pre>{@code
 * try (FsModel model = FsModel.load("Qwen/Qwen3-0.6B", FsModel.Options.defaults());
 *      Chat chat = model.newChat(ChatParams.defaults().withMaxTokens(200))) {
 *     Reply reply = chat.send("Why is the sky blue?", System.out::print);
 *     System.out.println("\n" + reply.generatedTokens() + " tokens, " + reply.stopReason());
 * }
 * }</pre>
 *
 * <p>{@link fs.api.FsModel} is the loaded model (weights uploaded once, and one scheduler thread that runs every
 * forward, decoding the chats that are answering together in one batch); {@link fs.api.Chat} is one conversation on
 * it, which keeps its history; {@link fs.api.Chat#send} answers one message, streaming its text to a
 * {@link fs.api.TokenConsumer} and returning a {@link fs.api.Reply}. Every failure is an {@link fs.FsException} whose
 * message is one line meant for the user.
 */
package fs.api;
