package fs.chat.constraint;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.grammar.Grammar;
import fs.grammar.GrammarException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class AnswerGrammarTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<AnswerGrammar.Function> FUNCTIONS = List.of(
            new AnswerGrammar.Function("get_weather", json("{\"type\":\"object\",\"properties\":"
                    + "{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}")),
            new AnswerGrammar.Function("get_time", json("{\"type\":\"object\",\"properties\":{}}")));
    private static final String PARIS = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"
            + "\n</tool_call>";
    private static final String TIME = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static boolean matches(String gbnf, String text) {
        return Grammar.parse(gbnf).matches(text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void requiredCallsAreOneOrMoreCallsOfTheOfferedFunctions() {
        String parallel = AnswerGrammar.toolCalls(FUNCTIONS, true, false);
        assertTrue(matches(parallel, PARIS));
        assertTrue(matches(parallel, PARIS + "\n" + TIME));
        assertFalse(matches(parallel, ""), "at least one call");
        assertFalse(matches(parallel, "Sure. " + PARIS), "no text before the calls");
        assertFalse(matches(parallel, PARIS.replace("get_weather", "get_whether")), "only the offered names");
        assertFalse(matches(parallel, PARIS.replace("{\"city\": \"Paris\"}", "{}")), "the arguments follow the schema");
        String one = AnswerGrammar.toolCalls(FUNCTIONS, false, false);
        assertTrue(matches(one, TIME));
        assertFalse(matches(one, PARIS + "\n" + TIME), "without parallel calls exactly one");
    }

    @Test
    void aThinkBlockMayComeFirstWhenThinkingIsOn() {
        String thinking = AnswerGrammar.toolCalls(FUNCTIONS, true, true);
        assertTrue(matches(thinking, "<think>\nThe user wants the weather; a < b.\n</think>\n\n" + PARIS));
        assertTrue(matches(thinking, PARIS), "the block is optional");
        assertFalse(matches(thinking, "<think>\nnever closed " + PARIS));
        assertFalse(matches(AnswerGrammar.toolCalls(FUNCTIONS, true, false), "<think>\n</think>\n\n" + PARIS));
    }

    @Test
    void theLayoutAfterTheThoughtsIsBoundedSoThatAModelCannotLoopInIt() {
        String calls = AnswerGrammar.toolCalls(FUNCTIONS, false, true);
        assertTrue(matches(calls, "<think>\nx\n</think>" + PARIS));
        assertTrue(matches(calls, "<think>\nx\n</think>" + "\n \n".repeat(6) + "\n\n" + PARIS), "20 characters");
        assertFalse(matches(calls, "<think>\nx\n</think>" + "\n".repeat(21) + PARIS));
        assertFalse(matches(calls, "<think>\nx\n</think>" + " ".repeat(21) + PARIS));
        String indented = "\n" + " ".repeat(20);
        assertTrue(matches(calls, PARIS.replace("{\"city\": ", "{" + indented + "\"city\":" + indented)),
                "the arguments' whitespace is bounded as any schema's");
        assertFalse(matches(calls, PARIS.replace("{\"city\": ", "{" + indented + " \"city\": ")));
        JsonNode schema = json("{\"type\":\"object\"}");
        assertTrue(matches(AnswerGrammar.json(schema, true), "<think>\nx\n</think>" + " ".repeat(20) + "{}"));
        assertFalse(matches(AnswerGrammar.json(schema, true), "<think>\nx\n</think>" + " ".repeat(21) + "{}"));
    }

    @Test
    void afterAToolCallTagTheRestOfTheCallFollows() {
        String rest = AnswerGrammar.afterToolCallTag(FUNCTIONS, true);
        assertTrue(matches(rest, PARIS.substring("<tool_call>".length())));
        assertTrue(matches(rest, PARIS.substring("<tool_call>".length()) + "\n" + TIME));
        assertFalse(matches(AnswerGrammar.afterToolCallTag(FUNCTIONS, false),
                PARIS.substring("<tool_call>".length()) + "\n" + TIME));
    }

    @Test
    void aJsonAnswerFollowsItsSchema() {
        JsonNode schema =
                json("{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}},\"required\":[\"n\"]}");
        assertTrue(matches(AnswerGrammar.json(schema, false), "{\"n\": 3}"));
        assertFalse(matches(AnswerGrammar.json(schema, false), "{\"n\": \"3\"}"));
        assertTrue(matches(AnswerGrammar.json(schema, true), "<think>\nthree\n</think>\n\n{\"n\": 3}"));
    }

    @Test
    void aSchemaTheGrammarCannotHoldIsAGrammarException() {
        assertThrows(GrammarException.class, () -> AnswerGrammar.toolCalls(List.of(new AnswerGrammar.Function("f",
                json("{\"type\":\"string\",\"pattern\":\"a+\"}"))), true, false));
    }
}
