package fs.chat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import fs.tokenizer.Qwen3Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The next turn's prompt against the ids Hugging Face's tokenizer gives for its own rendering, with the system prompt
 * passed apart (as the CLI's conversation and the API's chat keep it) and as the first message (as a server request
 * brings it): both must be the same ids, the ones the model was tuned on.
 */
class ChatPromptTest {
    private final ChatPrompt prompt = new ChatPrompt(ChatTemplate.load(Qwen3Files.dir()), Qwen3Files.tokenizer());

    @Test
    void givesHuggingFacesIdsWithTheSystemPromptApartOrFirst() {
        int checked = 0, withSystem = 0;
        for (JsonNode c : Qwen3Files.jsonLines("qwen3_chat_template_golden.jsonl")) {
            if (!c.get("add_generation_prompt").asBoolean()) continue; // a next turn always asks for the answer
            String name = c.get("name").asText();
            List<ChatMessage> messages = new ArrayList<>();
            for (JsonNode m : c.get("messages")) {
                messages.add(new ChatMessage(m.get("role").asText(), m.get("content").asText()));
            }
            JsonNode thinking = c.get("enable_thinking");
            Boolean enableThinking = thinking.isNull() ? null : thinking.asBoolean();
            int[] expected = Qwen3Files.ints(c.get("ids"));

            assertArrayEquals(expected, prompt.nextTurn(null, messages, List.of(), enableThinking), name);
            if (messages.getFirst().role().equals("system")) {
                withSystem++;
                List<ChatMessage> rest = messages.subList(1, messages.size());
                assertArrayEquals(expected,
                        prompt.nextTurn(messages.getFirst().content(), rest, List.of(), enableThinking), name);
            }
            checked++;
        }
        assertEquals(6, checked);
        assertEquals(2, withSystem);
    }

    @Test
    void offersTheToolsInTheSystemBlockWithTheSystemPromptApartOrFirst() {
        JsonNode c = Qwen3Files.jsonLines("qwen3_chat_template_extra_golden.jsonl").stream()
                .filter(line -> line.get("name").asText().equals("tools_system_user")).findFirst().orElseThrow();
        List<JsonNode> tools = new ArrayList<>();
        c.get("tools").forEach(tools::add);
        JsonNode system = c.get("messages").get(0), user = c.get("messages").get(1);
        assertEquals("system", system.get("role").asText());
        // Jinja2's rendering of the conversation, encoded: what transformers would feed the model.
        int[] expected = Qwen3Files.tokenizer().encode(c.get("rendered").asText());

        List<ChatMessage> both = List.of(ChatMessage.system(system.get("content").asText()),
                ChatMessage.user(user.get("content").asText()));
        assertArrayEquals(expected, prompt.nextTurn(null, both, tools, null));
        assertArrayEquals(expected, prompt.nextTurn(system.get("content").asText(), both.subList(1, 2), tools, null));
    }
}
