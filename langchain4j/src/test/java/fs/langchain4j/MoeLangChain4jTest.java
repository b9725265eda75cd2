package fs.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import fs.api.Chat;
import fs.api.ChatParams;
import fs.api.FsModel;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The provider on a Qwen3-MoE, models/tiny-moe (Hugging Face form, sharded, per-expert tensors): the chat model and
 * the streaming one answer greedily what the library answers the same question (fs-core's MoeFsModelTest holds that
 * answer to the Generator's).
 */
class MoeLangChain4jTest {
    private static final Path MODEL = Path.of(System.getProperty("fs.repo"), "models", "tiny-moe");
    private static final String QUESTION = "Why is the sky blue?";

    @Test
    void theChatModelsAnswerAsTheLibraryDoes() throws Exception {
        ChatParams greedy = ChatParams.defaults().withTemperature(0).withMaxTokens(10);
        try (FsModel model = FsModel.load(MODEL.toString(), FsModel.Options.defaults().withBackend("cpu")
                .withThreads(2).withContextLength(256))) {
            String want;
            try (Chat chat = model.newChat(greedy)) {
                want = chat.send(QUESTION, text -> {}).text();
            }
            assertFalse(want.isEmpty(), "the model says something");
            ChatResponse response = new FsChatModel(model, greedy)
                    .chat(ChatRequest.builder().messages(UserMessage.from(QUESTION)).build());
            assertEquals(want, response.aiMessage().text());

            StringBuilder partial = new StringBuilder();
            CompletableFuture<ChatResponse> done = new CompletableFuture<>();
            new FsStreamingChatModel(model, greedy).chat(ChatRequest.builder().messages(UserMessage.from(QUESTION))
                    .build(), new StreamingChatResponseHandler() {
                        @Override
                        public void onPartialResponse(String text) {
                            partial.append(text);
                        }

                        @Override
                        public void onCompleteResponse(ChatResponse complete) {
                            done.complete(complete);
                        }

                        @Override
                        public void onError(Throwable error) {
                            done.completeExceptionally(error);
                        }
                    });
            assertEquals(want, done.get(60, TimeUnit.SECONDS).aiMessage().text());
            assertEquals(want, partial.toString());
        }
    }
}
