package fs.chat.constraint;

import com.fasterxml.jackson.databind.JsonNode;
import fs.grammar.JsonSchemaGbnf;
import java.util.ArrayList;
import java.util.List;

/**
 * The GBNF grammars that hold a Qwen3 chat answer to a shape: to tool calls, written as the chat template asks
 * ({@code <tool_call>\n{"name": "fn", "arguments": {...}}\n</tool_call>}, the arguments following the function's
 * parameters schema), or to JSON that a schema accepts.
 *
 * <p>An answer constrained from its first token may let Qwen3 think first: with thinking on, Qwen3 opens its answer
 * with a {@code <think>…</think>} block, so the grammar then starts with an optional one, and the shape follows it.
 * Inside it the thoughts are free but for the two characters {@code </}, which only the closing tag may hold (a GBNF
 * grammar has no "anything but this word"); at most 20 spaces or newlines follow it. With thinking off, the template
 * has already closed an empty block in the prompt, and the shape starts at once.
 */
public final class AnswerGrammar {
    /**
     * The layout after the thoughts is bounded (the template's is two newlines), as the JSON's whitespace is: a
     * random model favours whitespace tokens wherever they are allowed and, unbounded, never gets to the answer.
     */
    private static final String THINK = """
            think ::= "<think>" think-text "</think>" [ \\n]{0,20}
            think-text ::= ( [^<] | "<"+ [^</] )*
            """;

    /** A function the model may call: its name (a plain word) and its parameters' JSON schema. */
    public record Function(String name, JsonNode parameters) {}

    private AnswerGrammar() {}

    /**
     * The whole answer is calls of {@code functions}: one or more, each on a line of its own, when {@code parallel},
     * else exactly one; after an optional think block when {@code thinkFirst}.
     *
     * @throws fs.grammar.GrammarException when a function's parameters are a schema a grammar cannot hold
     */
    public static String toolCalls(List<Function> functions, boolean parallel, boolean thinkFirst) {
        StringBuilder gbnf = new StringBuilder();
        gbnf.append("root ::= ").append(thinkFirst ? "think? " : "")
                .append(parallel ? "call ( \"\\n\" call )*\n" : "call\n");
        gbnf.append("call ::= \"<tool_call>\" call-body\n");
        callBody(functions, gbnf);
        if (thinkFirst) gbnf.append(THINK);
        return gbnf.toString();
    }

    /**
     * What follows a {@code <tool_call>} token that the model wrote of its own accord: the rest of that call, and
     * with {@code parallel} any further calls, each after a line break.
     */
    public static String afterToolCallTag(List<Function> functions, boolean parallel) {
        StringBuilder gbnf = new StringBuilder();
        gbnf.append("root ::= call-body").append(parallel ? " ( \"\\n<tool_call>\" call-body )*\n" : "\n");
        callBody(functions, gbnf);
        return gbnf.toString();
    }

    /**
     * The whole answer is JSON that {@code schema} accepts, after an optional think block when {@code thinkFirst}.
     *
     * @throws fs.grammar.GrammarException when the schema is one a grammar cannot hold
     */
    public static String json(JsonNode schema, boolean thinkFirst) {
        if (!thinkFirst) return JsonSchemaGbnf.toGbnf(schema);
        return "root ::= think? answer\n" + JsonSchemaGbnf.rules(schema, "answer") + "\n" + THINK;
    }

    /** {@code call-body}: a newline, the call's JSON as the template shows it, and the closing tag. */
    private static void callBody(List<Function> functions, StringBuilder gbnf) {
        if (functions.isEmpty()) throw new IllegalArgumentException("a call needs at least one function");
        List<String> alternatives = new ArrayList<>();
        StringBuilder rules = new StringBuilder();
        for (int i = 0; i < functions.size(); i++) {
            Function function = functions.get(i);
            if (!function.name().matches("[A-Za-z0-9_-]+")) {
                throw new IllegalArgumentException("a function name must be a plain word: " + function.name());
            }
            String arguments = "args" + i;
            alternatives.add("\"\\n{\\\"name\\\": \\\"" + function.name() + "\\\", \\\"arguments\\\": \" " + arguments
                    + " \"}\\n</tool_call>\"");
            rules.append(JsonSchemaGbnf.rules(function.parameters(), arguments)).append('\n');
        }
        gbnf.append("call-body ::= ").append(String.join(" | ", alternatives)).append('\n').append(rules);
    }
}
