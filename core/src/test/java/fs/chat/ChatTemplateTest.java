package fs.chat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.fuzz.LoaderContract;
import fs.tokenizer.Qwen3Files;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Qwen3's chat template against renderings by Hugging Face's Jinja (@huggingface/jinja, with the prompt's ids) and by
 * Python's Jinja2 set up as transformers sets it up (tools, tool calls, reasoning_content: see
 * make_chat_template_extra_golden.py).
 */
class ChatTemplateTest {
    private final ChatTemplate template = ChatTemplate.load(Qwen3Files.dir());

    @Test
    void rendersTheHuggingFaceGoldensWithTheirIds() {
        List<JsonNode> cases = Qwen3Files.jsonLines("qwen3_chat_template_golden.jsonl");
        assertEquals(8, cases.size());
        for (JsonNode c : cases) {
            String rendered = render(c);
            assertEquals(c.get("rendered").asText(), rendered, c.get("name").asText());
            assertArrayEquals(Qwen3Files.ints(c.get("ids")), Qwen3Files.tokenizer().encode(rendered), c.get("name").asText());
        }
    }

    @Test
    void rendersToolsToolCallsAndReasoningAsJinja2Does() {
        List<JsonNode> cases = Qwen3Files.jsonLines("qwen3_chat_template_extra_golden.jsonl");
        assertEquals(11, cases.size());
        for (JsonNode c : cases) assertEquals(c.get("rendered").asText(), render(c), c.get("name").asText());
    }

    @Test
    void writesFloatsAsPythonDoes() {
        assertEquals("1e-05", PythonJson.pythonFloat(0.00001));
        assertEquals("0.0001", PythonJson.pythonFloat(0.0001));
        assertEquals("1e+16", PythonJson.pythonFloat(1e16));
        assertEquals("1000000000000000.0", PythonJson.pythonFloat(1e15));
        assertEquals("-2.5e-07", PythonJson.pythonFloat(-2.5e-7));
        assertEquals("0.1", PythonJson.pythonFloat(0.1));
        assertEquals("123.456", PythonJson.pythonFloat(123.456));
        assertEquals("1.7976931348623157e+308", PythonJson.pythonFloat(Double.MAX_VALUE));
        assertEquals("-0.0", PythonJson.pythonFloat(-0.0));
    }

    @Test
    void refusesAnotherTemplate(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("tokenizer_config.json"), "{\"chat_template\": \"{{ messages[0].content }}\"}");
        FsException e = assertThrows(FsException.class, () -> ChatTemplate.load(dir));
        assertTrue(e.getMessage().contains("unsupported chat template"), e.getMessage());
    }

    @Test
    void readsTheTemplateFromChatTemplateJinja(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("chat_template.jinja"), Qwen3Files.text("tokenizer_config.json").transform(ChatTemplateTest::templateOf));
        ChatTemplate fromJinja = ChatTemplate.load(dir);
        List<ChatMessage> chat = List.of(ChatMessage.user("Hi"));
        assertEquals(template.render(chat, true, false), fromJinja.render(chat, true, false));
    }

    @Test
    void describesABrokenTokenizerConfigInPlainWords(@TempDir Path dir) throws IOException {
        Path config = dir.resolve("tokenizer_config.json");
        String[][] cases = {
            {"{\"chat_template\": \"abc", ": the file ends in the middle of a string at line 1, column 23"},
            {"{\"eos_token\": [1, 2}", ": not valid JSON: Unexpected close marker '}': expected ']' at line 1, column 20"},
            {"{\"x\": " + "[".repeat(1200) + "]".repeat(1200) + "}", ": nested more than 1000 levels deep"},
            {"{\"chat_template\": [7]}", ": chat_template lists an integer where a named template {\"name\": ..., \"template\": ...} belongs"},
            {"{\"chat_template\": [{\"name\": {\"default\": 1}, \"template\": \"x\"}]}", ": chat_template lists no template named \"default\""},
        };
        for (String[] c : cases) {
            Files.writeString(config, c[0]);
            FsException e = assertThrows(FsException.class, () -> ChatTemplate.load(dir));
            assertEquals(config + c[1], e.getMessage());
            assertNull(LoaderContract.violation(e, "tokenizer_config.json"));
        }
    }

    @Test
    void refusesAChatTemplateJinjaTooLargeToBeOneBeforeReadingIt(@TempDir Path dir) throws IOException {
        Path jinja = dir.resolve("chat_template.jinja");
        try (RandomAccessFile file = new RandomAccessFile(jinja.toFile(), "rw")) {
            file.setLength(3_000_000_000L); // sparse: no disk, and more than a String can hold if it were read
        }
        FsException e = assertThrows(FsException.class, () -> ChatTemplate.load(dir));
        assertEquals(jinja + ": 3000000000 bytes, more than any chat template needs (the limit is 1048576)", e.getMessage());
    }

    @Test
    void reportsAMissingTemplate(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("tokenizer_config.json"), "{\"eos_token\": \"x\"}");
        FsException e = assertThrows(FsException.class, () -> ChatTemplate.load(dir));
        assertTrue(e.getMessage().startsWith("no chat template in "), e.getMessage());
    }

    @Test
    void refusesAnEmptyChatAndMissingContent() {
        assertThrows(FsException.class, () -> template.render(List.of(), true, null));
        assertThrows(FsException.class, () -> new ChatMessage("user", null));
    }

    private static String templateOf(String configJson) {
        try {
            return new com.fasterxml.jackson.databind.ObjectMapper().readTree(configJson).get("chat_template").asText();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private String render(JsonNode c) {
        List<ChatMessage> messages = new ArrayList<>();
        for (JsonNode m : c.get("messages")) {
            List<ToolCall> calls = new ArrayList<>();
            if (m.has("tool_calls")) {
                for (JsonNode call : m.get("tool_calls")) {
                    JsonNode function = call.has("function") ? call.get("function") : call;
                    calls.add(new ToolCall(function.get("name").asText(), function.get("arguments")));
                }
            }
            String reasoning = m.has("reasoning_content") ? m.get("reasoning_content").asText() : null;
            messages.add(new ChatMessage(m.get("role").asText(), m.get("content").asText(), reasoning, calls));
        }
        List<JsonNode> tools = new ArrayList<>();
        if (c.has("tools")) c.get("tools").forEach(tools::add);
        JsonNode thinking = c.get("enable_thinking");
        Boolean enableThinking = thinking == null || thinking.isNull() ? null : thinking.asBoolean();
        return template.render(messages, tools, c.get("add_generation_prompt").asBoolean(), enableThinking);
    }
}
