package fs.server;

import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A LangChain4j streaming chat (any provider's model against a live server) run to its end: the pieces of text as
 * they came, the thinking, and the final response.
 */
record LangChain4jStream(List<String> pieces, String thinking, ChatResponse response) {
    /** The streamed text, whole. */
    String text() {
        return String.join("", pieces);
    }

    /** Streams {@code model}'s answer to {@code message}; a failure, or no end within 60 s, is thrown. */
    static LangChain4jStream of(StreamingChatModel model, String message) throws Exception {
        List<String> pieces = new ArrayList<>();
        StringBuilder thought = new StringBuilder();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        model.chat(message, new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String partial) {
                pieces.add(partial);
            }

            @Override
            public void onPartialThinking(PartialThinking partial) {
                thought.append(partial.text());
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {
                done.complete(response);
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }
        });
        ChatResponse response = done.get(60, TimeUnit.SECONDS);
        return new LangChain4jStream(List.copyOf(pieces), thought.toString(), response);
    }
}
