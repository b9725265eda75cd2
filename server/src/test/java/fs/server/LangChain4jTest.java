package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.langchain4j.model.output.FinishReason;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * LangChain4j's OpenAI models against the server: on models/tiny-tied with the serial engine (answers equal the
 * Generator's greedy text), and on a scripted engine that answers as Qwen3 does when it thinks, whose reasoning must
 * arrive as LangChain4j's thinking, apart from the text.
 */
class LangChain4jTest {
    private static final int MAX_TOKENS = 12;
    private static final String QUESTION = "Why is the sky blue?";
    private static final String THOUGHT = "The user asks about the sky.\nRayleigh scattering.";
    private static final String ANSWER = "Because of Rayleigh scattering.";

    private static TestServer tiny;
    private static TestServer thinking;
    private static String expected;

    @BeforeAll
    static void start() {
        tiny = TestServer.load(512);
        expected = tiny.text(tiny.greedy(tiny.chatPrompt(QUESTION, null), MAX_TOKENS).ids());
        tiny.serve(tiny.schedulerEngine(1, 4), null);
        thinking = TestServer.load(256);
        int[] script = thinking.tokenizer.encode("<think>\n" + THOUGHT + "\n</think>\n\n" + ANSWER);
        thinking.serve(new ScriptedEngine(script, 0), null);
    }

    @AfterAll
    static void stop() {
        if (tiny != null) tiny.close();
        if (thinking != null) thinking.close();
    }

    /** The scripted answer's tokens must all come: the limit is well above them. */
    private static int maxTokens(TestServer server) {
        return server == thinking ? 200 : MAX_TOKENS;
    }

    private static OpenAiChatModel chatModel(TestServer server) {
        return OpenAiChatModel.builder().baseUrl(server.url("/v1")).apiKey("unused").modelName(TestServer.MODEL_ID)
                .temperature(0.0).maxTokens(maxTokens(server)).returnThinking(true).maxRetries(0)
                .timeout(Duration.ofSeconds(60)).build();
    }

    private static OpenAiStreamingChatModel streamingModel(TestServer server) {
        return OpenAiStreamingChatModel.builder().baseUrl(server.url("/v1")).apiKey("unused")
                .modelName(TestServer.MODEL_ID).temperature(0.0).maxTokens(maxTokens(server)).returnThinking(true)
                .timeout(Duration.ofSeconds(60)).build();
    }

    @Test
    void theChatModelGetsTheGreedyAnswer() {
        ChatResponse response = chatModel(tiny).chat(UserMessage.from(QUESTION));
        assertEquals(expected, response.aiMessage().text());
        assertEquals(FinishReason.LENGTH, response.finishReason());
        assertEquals(MAX_TOKENS, response.tokenUsage().outputTokenCount());
    }

    @Test
    void theStreamingChatModelGetsTheSameAnswerInPieces() throws Exception {
        LangChain4jStream streamed = LangChain4jStream.of(streamingModel(tiny), QUESTION);
        assertEquals(expected, streamed.text());
        assertEquals(expected, streamed.response().aiMessage().text());
        assertEquals(FinishReason.LENGTH, streamed.response().finishReason());
    }

    @Test
    void qwen3sThinkingArrivesAsThinkingApartFromTheText() throws Exception {
        ChatResponse whole = chatModel(thinking).chat(UserMessage.from(QUESTION));
        assertEquals(ANSWER, whole.aiMessage().text());
        assertEquals(THOUGHT, whole.aiMessage().thinking());
        assertEquals(FinishReason.STOP, whole.finishReason());

        LangChain4jStream streamed = LangChain4jStream.of(streamingModel(thinking), QUESTION);
        assertEquals(ANSWER, streamed.text());
        assertEquals(THOUGHT, streamed.thinking(), "through onPartialThinking");
        assertEquals(THOUGHT, streamed.response().aiMessage().thinking());
    }
}
