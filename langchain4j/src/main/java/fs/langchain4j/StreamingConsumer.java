package fs.langchain4j;

import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import fs.api.TokenConsumer;

/** Passes an answer's pieces on to LangChain4j: its text as partial responses, its reasoning as partial thinking. */
final class StreamingConsumer implements TokenConsumer {
    private final StreamingChatResponseHandler handler;

    StreamingConsumer(StreamingChatResponseHandler handler) {
        this.handler = handler;
    }

    @Override
    public void onText(String text) {
        handler.onPartialResponse(text);
    }

    @Override
    public void onReasoning(String text) {
        handler.onPartialThinking(new PartialThinking(text));
    }
}
