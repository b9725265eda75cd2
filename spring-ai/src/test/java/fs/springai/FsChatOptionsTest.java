package fs.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import fs.api.ToolChoice;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.tool.function.FunctionToolCallback;

/** How ChatClient builds a call's options from the model's: {@code mutate()} keeps every field, the call's win. */
class FsChatOptionsTest {
    private static final FunctionToolCallback<String, String> ECHO = FunctionToolCallback
            .builder("echo", (String text) -> text).inputType(String.class).description("Says it again").build();

    private static FsChatOptions all() {
        return FsChatOptions.builder().model("m").frequencyPenalty(0.5).maxTokens(9).presencePenalty(0.25)
                .stopSequences(List.of("x")).temperature(0.7).topK(5).topP(0.9).toolCallbacks(List.of(ECHO))
                .toolContext(Map.of("k", "v")).outputSchema("{\"type\":\"object\"}").toolChoice(ToolChoice.REQUIRED)
                .seed(11L).thinking(false).build();
    }

    private static void assertSame(FsChatOptions want, FsChatOptions got) {
        assertEquals(want.getModel(), got.getModel());
        assertEquals(want.getFrequencyPenalty(), got.getFrequencyPenalty());
        assertEquals(want.getMaxTokens(), got.getMaxTokens());
        assertEquals(want.getPresencePenalty(), got.getPresencePenalty());
        assertEquals(want.getStopSequences(), got.getStopSequences());
        assertEquals(want.getTemperature(), got.getTemperature());
        assertEquals(want.getTopK(), got.getTopK());
        assertEquals(want.getTopP(), got.getTopP());
        assertEquals(want.getToolCallbacks(), got.getToolCallbacks());
        assertEquals(want.getToolContext(), got.getToolContext());
        assertEquals(want.getOutputSchema(), got.getOutputSchema());
        assertEquals(want.getToolChoice(), got.getToolChoice());
        assertEquals(want.getSeed(), got.getSeed());
        assertEquals(want.getThinking(), got.getThinking());
    }

    @Test
    void mutateKeepsEveryField() {
        FsChatOptions options = all();
        assertSame(options, options.mutate().build());
        assertSame(options, FsChatOptions.builder().build().mutate().combineWith(options.mutate()).build());
    }

    @Test
    void theCallsOptionsWinAndTheUnsetOnesKeepTheModels() {
        FsChatOptions model = FsChatOptions.builder().model("m").temperature(0.0).maxTokens(12).thinking(true).build();
        FsChatOptions call = model.mutate().combineWith(FsChatOptions.builder().temperature(0.7).seed(11L)
                .toolChoice(ToolChoice.NONE)).build();
        assertEquals("m", call.getModel());
        assertEquals(0.7, call.getTemperature());
        assertEquals(12, call.getMaxTokens());
        assertEquals(true, call.getThinking());
        assertEquals(11L, call.getSeed());
        assertEquals(ToolChoice.NONE, call.getToolChoice());
        assertNull(call.getOutputSchema());
        // Spring AI's portable builder, as ChatClient's .options(ChatOptions.builder()…) gives it.
        FsChatOptions portable = model.mutate().combineWith(ChatOptions.builder().topK(3)).build();
        assertEquals(3, portable.getTopK());
        assertEquals(0.0, portable.getTemperature());
    }
}
