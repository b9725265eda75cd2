package fs.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ToolCallSplitterTest {
    /** The pieces of {@code answer} pushed in chunks of {@code size} characters, then flushed. */
    private static List<ToolCallSplitter.Piece> split(String answer, int size) {
        ToolCallSplitter splitter = new ToolCallSplitter();
        List<ToolCallSplitter.Piece> pieces = new ArrayList<>();
        for (int i = 0; i < answer.length(); i += size) {
            pieces.addAll(splitter.push(answer.substring(i, Math.min(answer.length(), i + size))));
        }
        pieces.addAll(splitter.flush());
        return pieces;
    }

    /** Adjacent texts joined, calls as "name arguments", so that the chunking does not matter. */
    private static List<String> described(List<ToolCallSplitter.Piece> pieces) {
        List<String> out = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        for (ToolCallSplitter.Piece piece : pieces) {
            switch (piece) {
                case ToolCallSplitter.Piece.Text t -> text.append(t.text());
                case ToolCallSplitter.Piece.Found f -> {
                    if (!text.isEmpty()) out.add("text:" + text);
                    text.setLength(0);
                    out.add("call:" + f.call().name() + " " + f.call().arguments());
                }
            }
        }
        if (!text.isEmpty()) out.add("text:" + text);
        return out;
    }

    @Test
    void callsAreFoundWhateverTheChunking() {
        String answer = "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"
                + "\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
        List<String> expected = List.of("text:Let me look.", "call:get_weather {\"city\":\"Paris\"}",
                "call:get_time {}");
        for (int size = 1; size <= answer.length(); size++) assertEquals(expected, described(split(answer, size)));
    }

    @Test
    void textWithoutCallsPassesAsItIs() {
        String answer = "a < b, and <tool is no tag;\n trailing space \n";
        for (int size = 1; size <= answer.length(); size++) {
            assertEquals(List.of("text:" + answer), described(split(answer, size)));
        }
    }

    @Test
    void blocksWithoutACallAndUnclosedBlocksStayText() {
        assertEquals(List.of("text:<tool_call>\nnot json\n</tool_call>"),
                described(split("<tool_call>\nnot json\n</tool_call>", 3)));
        assertEquals(List.of("text:<tool_call>\n{\"arguments\": {}}\n</tool_call>"),
                described(split("<tool_call>\n{\"arguments\": {}}\n</tool_call>", 3)), "a call needs a name");
        assertEquals(List.of("call:f {}", "text:<tool_call>\n{\"name\": \"g\", \"argu"),
                described(split("<tool_call>{\"name\": \"f\"}</tool_call>\n<tool_call>\n{\"name\": \"g\", \"argu",
                        4)), "cut short by the token limit: the open block is text");
    }

    @Test
    void textAfterACallIsKeptWithoutTheLayout() {
        assertEquals(List.of("call:f {\"x\":1}", "text:Done."),
                described(split("<tool_call>{\"name\":\"f\",\"arguments\":{\"x\":1}}</tool_call>\n\nDone.", 5)));
        assertEquals(List.of("call:f already a string"),
                described(split("<tool_call>{\"name\":\"f\",\"arguments\":\"already a string\"}</tool_call>", 7)),
                "arguments the model wrote as a string are passed as they are");
    }

    @Test
    void eachCallGetsItsOwnOpenAiStyleId() {
        List<ToolCallSplitter.Piece> pieces = split("<tool_call>{\"name\":\"f\"}</tool_call>"
                + "<tool_call>{\"name\":\"f\"}</tool_call>", 100);
        String first = ((ToolCallSplitter.Piece.Found) pieces.get(0)).call().id();
        String second = ((ToolCallSplitter.Piece.Found) pieces.get(1)).call().id();
        assertTrue(first.matches("call_[A-Za-z0-9]{24}"), first);
        assertNotEquals(first, second);
    }
}
