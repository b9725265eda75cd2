package fs.server;

import com.fasterxml.jackson.databind.JsonNode;
import fs.chat.constraint.AnswerGrammar;
import fs.chat.constraint.GrammarCache;
import fs.chat.constraint.ModelOpenedCalls;
import fs.generate.TokenConstraint;
import fs.grammar.Grammar;
import fs.grammar.GrammarConstraint;
import fs.grammar.GrammarException;
import fs.grammar.JsonSchemaGbnf;
import fs.grammar.TokenVocabulary;
import fs.tokenizer.Tokenizer;
import java.util.List;

/**
 * Turns what a request asks of its answer's shape into the constraint its tokens are sampled under: a JSON object,
 * a JSON schema, a GBNF grammar, or tool calls (from the first token when tool_choice requires them, else from the
 * {@code <tool_call>} token the model writes of its own accord). A grammar or schema that cannot be used is a 400
 * naming its field. Compiled grammars are kept for the next requests that ask for the same one. Thread-safe.
 */
final class AnswerConstraints {
    /** OpenAI's json_object: any object, whatever its properties. */
    private static final JsonNode ANY_OBJECT =
            Exchange.JSON.createObjectNode().put("type", "object").put("additionalProperties", true);

    private final GrammarCache grammars = new GrammarCache(16);

    /**
     * The constraint for {@code request}, null when its answer is free. {@code thinking}: whether the prompt leaves
     * the model to open a think block (a chat whose thinking is not turned off).
     */
    TokenConstraint of(CompletionRequest request, boolean thinking, Tokenizer tokenizer, int[] stopIds) {
        ChatTools tools = request.tools();
        if (tools.offered()) return toolCalls(tools, thinking, tokenizer, stopIds);
        String param = switch (request.format()) {
            case OutputFormat.JsonSchema schema -> schema.param();
            case OutputFormat.Gbnf grammar -> grammar.param();
            default -> "response_format";
        };
        String gbnf;
        try {
            gbnf = switch (request.format()) {
                case OutputFormat.Text _ -> null;
                case OutputFormat.JsonObject _ -> AnswerGrammar.json(ANY_OBJECT, thinking);
                case OutputFormat.JsonSchema schema -> AnswerGrammar.json(schema.schema(), thinking);
                case OutputFormat.Gbnf grammar -> grammar.grammar(); // the client's: applied as it is, from the start
            };
        } catch (GrammarException e) {
            throw ApiException.invalid(param, "'" + param + "' cannot be used: " + e.getMessage());
        }
        if (gbnf == null) return null;
        return new GrammarConstraint(compiled(gbnf, param), TokenVocabulary.of(tokenizer), stopIds);
    }

    /**
     * Required calls (or a named function) hold the whole answer to calls, after an optional think block (in the
     * grammar, so that the answer cannot end before its calls); auto lets the model write freely and holds only what
     * follows a {@code <tool_call>} token it writes to a well-formed call of an offered function, once its thoughts
     * are over (a tag mentioned in them starts nothing).
     */
    private TokenConstraint toolCalls(ChatTools tools, boolean thinking, Tokenizer tokenizer, int[] stopIds) {
        List<ChatTools.Function> callable = tools.callable();
        for (ChatTools.Function function : callable) {
            try {
                JsonSchemaGbnf.toGbnf(function.parameters());
            } catch (GrammarException e) {
                String param = function.schemaParam();
                throw ApiException.invalid(param, "'" + param + "' cannot be used: " + e.getMessage());
            }
        }
        List<AnswerGrammar.Function> functions =
                callable.stream().map(f -> new AnswerGrammar.Function(f.name(), f.parameters())).toList();
        if (tools.choice() instanceof ChatTools.Choice.Auto) {
            Grammar rest = compiled(AnswerGrammar.afterToolCallTag(functions, tools.parallel()), "tools");
            return ModelOpenedCalls.of(rest, tokenizer, stopIds, thinking);
        }
        Grammar calls = compiled(AnswerGrammar.toolCalls(functions, tools.parallel(), thinking), "tools");
        return new GrammarConstraint(calls, TokenVocabulary.of(tokenizer), stopIds);
    }

    private Grammar compiled(String gbnf, String param) {
        try {
            return grammars.compiled(gbnf);
        } catch (GrammarException e) {
            throw ApiException.invalid(param, "'" + param + "' is not a grammar this server can use: "
                    + e.getMessage());
        }
    }
}
