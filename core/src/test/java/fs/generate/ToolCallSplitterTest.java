package fs.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
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

    /**
     * Adjacent texts joined, calls as "name arguments", so that the chunking does not matter; each call's fragments
     * must add up to its arguments, between its opening and its close.
     */
    private static List<String> described(List<ToolCallSplitter.Piece> pieces) {
        List<String> out = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        StringBuilder fragments = null; // of the open call
        String opened = null;
        for (ToolCallSplitter.Piece piece : pieces) {
            switch (piece) {
                case ToolCallSplitter.Piece.Text t -> {
                    assertNull(fragments, "no text inside a call");
                    text.append(t.text());
                }
                case ToolCallSplitter.Piece.Opened o -> {
                    assertNull(fragments, "one call at a time");
                    if (!text.isEmpty()) out.add("text:" + text);
                    text.setLength(0);
                    fragments = new StringBuilder();
                    opened = o.id();
                }
                case ToolCallSplitter.Piece.Arguments a -> {
                    assertFalse(a.fragment().isEmpty());
                    fragments.append(a.fragment());
                }
                case ToolCallSplitter.Piece.Closed c -> {
                    assertEquals(opened, c.call().id());
                    assertEquals(fragments.toString(), c.call().arguments(), "the fragments are the arguments");
                    String cut = c.complete() ? "" : " (cut)";
                    out.add("call:" + c.call().name() + " " + c.call().arguments() + cut);
                    fragments = null;
                }
            }
        }
        assertNull(fragments, "every call closes");
        if (!text.isEmpty()) out.add("text:" + text);
        return out;
    }

    /** The start of a call of g, up to its arguments. */
    private static final String G = "<tool_call>\n{\"name\": \"g\", \"arguments\": ";

    @Test
    void callsAreFoundWhateverTheChunking() {
        String answer = "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"
                + "\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
        List<String> expected = List.of("text:Let me look.", "call:get_weather {\"city\": \"Paris\"}",
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
                        4)), "cut short before its arguments: the block is text");
        assertEquals(List.of("call:g {\"a\": [1, 2 (cut)"), described(split(G
                + "{\"a\": [1, 2", 3)), "cut short in its arguments: the call ends with what it has");
        assertEquals(List.of("call:g {\"a\": 1} (cut)"), described(split(G
                + "{\"a\": 1}}", 2)), "cut short before the closing tag: the call's own brace is not an argument");
        assertEquals(List.of("call:g {\"a\": 1} (cut)"), described(split(G
                + "{\"a\": 1}}\n</tool_c", 2)), "cut short inside the closing tag");
        assertEquals(List.of("call:g {\"a\": 1} (cut)"), described(split(G
                + "{\"a\": 1}", 2)), "cut short after the arguments' brace: it is theirs");
    }

    @Test
    void textAfterACallIsKeptWithoutTheLayout() {
        assertEquals(List.of("call:f {\"x\":1}", "text:Done."),
                described(split("<tool_call>{\"name\":\"f\",\"arguments\":{\"x\":1}}</tool_call>\n\nDone.", 5)));
        assertEquals(List.of("call:f {\"x\":1}"),
                described(split("<tool_call>{\"arguments\":{\"x\": 1},\"name\":\"f\"}</tool_call>", 7)),
                "a block with its name last is read whole when it closes");
        assertEquals(List.of("call:f {\"a\": {\"b\": {}}}"), described(split("<tool_call>\n{\"name\": \"f\", "
                + "\"arguments\": {\"a\": {\"b\": {}}} }\n</tool_call>", 1)), "only the call's own brace is dropped");
    }

    @Test
    void eachCallGetsItsOwnOpenAiStyleId() {
        List<ToolCallSplitter.Piece> pieces = split("<tool_call>{\"name\":\"f\"}</tool_call>"
                + "<tool_call>{\"name\":\"f\"}</tool_call>", 100);
        List<String> ids = pieces.stream().filter(p -> p instanceof ToolCallSplitter.Piece.Closed)
                .map(p -> ((ToolCallSplitter.Piece.Closed) p).call().id()).toList();
        String first = ids.get(0);
        String second = ids.get(1);
        assertTrue(first.matches("call_[A-Za-z0-9]{24}"), first);
        assertNotEquals(first, second);
    }
}
