package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import fs.generate.TokenConstraint;
import fs.tokenizer.Tokenizer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Which tokens the constraint of a request allows, on tiny-tied's Qwen3 vocabulary. */
class AnswerConstraintsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int TOOL_CALL = 151657, THINK = 151667, END_THINK = 151668, IM_END = 151645;
    private static final String TOOLS = "'tools':[{'type':'function','function':{'name':'f','parameters':"
            + "{'type':'object','properties':{'n':{'type':'integer'}},'required':['n']}}}]";

    private static Tokenizer tokenizer;
    private static int hello;
    private static int newline;
    private static int brace;

    @BeforeAll
    static void load() {
        tokenizer = Tokenizer.load(TestServer.MODEL);
        hello = single("hello");
        newline = single("\n");
        brace = single("{");
    }

    private static int single(String text) {
        int[] ids = tokenizer.encode(text);
        assertEquals(1, ids.length, text);
        return ids[0];
    }

    private static TokenConstraint constraint(String fields, boolean thinking) {
        try {
            CompletionRequest request = CompletionRequest.chat(JSON.readTree(("{'messages':[{'role':'user',"
                    + "'content':'x'}]," + fields + "}").replace('\'', '"')));
            return new AnswerConstraints().of(request, thinking, tokenizer, new int[] {IM_END});
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void requiredCallsStartWithTheTag() {
        TokenConstraint calls = constraint(TOOLS + ",'tool_choice':'required'", false);
        assertTrue(calls.allows(TOOL_CALL));
        assertFalse(calls.allows(hello));
        assertFalse(calls.allows(IM_END), "no answer without a call");
        assertFalse(calls.allows(THINK), "thinking is off: no think block");
        assertTrue(constraint(TOOLS + ",'tool_choice':'required'", true).allows(THINK));
    }

    @Test
    void autoHoldsOnlyWhatFollowsATagWrittenAfterTheThoughts() {
        TokenConstraint auto = constraint(TOOLS, true);
        assertTrue(auto.allows(hello) && auto.allows(IM_END), "free text");
        auto.accept(THINK);
        auto.accept(TOOL_CALL); // mentioned in the thoughts: starts nothing
        assertTrue(auto.allows(hello));
        auto.accept(hello);
        auto.accept(END_THINK);
        assertTrue(auto.allows(hello));
        auto.accept(TOOL_CALL);
        assertTrue(auto.allows(newline), "a call goes on as the template writes it");
        assertFalse(auto.allows(hello));
        assertFalse(auto.allows(IM_END));
    }

    @Test
    void formatsHoldTheAnswerFromItsFirstToken() {
        TokenConstraint object = constraint("'response_format':{'type':'json_object'}", false);
        assertTrue(object.allows(brace));
        assertFalse(object.allows(hello));
        assertNull(constraint("'response_format':{'type':'text'}", false));
        assertNull(constraint(TOOLS + ",'tool_choice':'none'", false), "no calls: nothing to hold");
        assertEquals("json_schema", assertThrows(ApiException.class,
                () -> constraint("'json_schema':{'type':'number','minimum':3}", false)).param);
    }
}
