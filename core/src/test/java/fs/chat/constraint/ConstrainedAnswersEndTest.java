package fs.chat.constraint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.backend.cpu.VectorBackend;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.grammar.Grammar;
import fs.grammar.GrammarConstraint;
import fs.grammar.TokenVocabulary;
import fs.model.Golden;
import fs.model.TestModel;
import fs.tokenizer.Tokenizer;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A random-weight model (tiny-untied) sampling at temperature 1 favours whitespace tokens wherever a grammar allows
 * them, so every stretch of whitespace an answer's grammar leaves open must be bounded for the answer to end. Under a
 * two-field schema, as JSON and as a required tool call, straight away and after the thoughts are closed, every
 * answer must be whole, valid JSON well inside a modest token limit.
 */
class ConstrainedAnswersEndTest {
    private static final ObjectMapper STRICT = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final String SCHEMA = """
            {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12},
             "days": {"type": "integer", "enum": [1, 3, 7]}}, "required": ["city", "days"]}""";
    private static final int LIMIT = 64;
    private static final Pattern CALL =
            Pattern.compile("<tool_call>\n\\{\"name\": \"get_weather\", \"arguments\": (.*)}\n</tool_call>", Pattern.DOTALL);

    private static TestModel model;
    private static Tokenizer tokenizer;
    private static TokenVocabulary vocabulary;
    private static int end;
    private static JsonNode schema;

    @BeforeAll
    static void open() throws Exception {
        model = TestModel.open(Golden.modelDir("tiny-untied"), new VectorBackend(2), 1024, 16, 1);
        tokenizer = Tokenizer.load(Golden.modelDir("tiny-untied"));
        vocabulary = TokenVocabulary.of(tokenizer);
        end = tokenizer.tokenId("<|im_end|>").orElseThrow();
        schema = STRICT.readTree(SCHEMA);
    }

    @AfterAll
    static void close() {
        model.close();
    }

    /**
     * What the model writes under {@code gbnf} with {@code seed}, after {@code written} (text of the answer that the
     * grammar has already taken, as if the model had written it).
     */
    private static String answer(String gbnf, String written, long seed) {
        GrammarConstraint constraint = new GrammarConstraint(Grammar.parse(gbnf), vocabulary, new int[] {end});
        int[] writtenIds = tokenizer.encode(written);
        for (int id : writtenIds) constraint.accept(id);
        int[] prompt = IntStream.concat(IntStream.of(tokenizer.encode(
                "<|im_start|>user\nWeather in Paris this week?<|im_end|>\n<|im_start|>assistant\n")),
                IntStream.of(writtenIds)).toArray();
        Generator generator = new Generator(model.sequence(), new int[] {end}, new SamplingParams(1f, 0, 1f, 0f, 1f, seed));
        Generator.Generation g = generator.generate(prompt, LIMIT, id -> {}, () -> false, constraint);
        String text = tokenizer.decode(g.ids(), false);
        assertEquals(StopReason.END_OF_SEQUENCE, g.stopReason(),
                "seed " + seed + ": no end within " + LIMIT + " tokens after " + written.replace("\n", "\\n") + ": "
                        + text.replace("\n", "\\n").replace("\t", "\\t"));
        return text;
    }

    /** Checks the arguments against the schema, by hand: a string of at most 12 characters, a day count of the enum. */
    private static void assertValid(String json, String context) {
        JsonNode value;
        try {
            value = STRICT.readTree(json);
        } catch (Exception e) {
            throw new AssertionError(context + ": not one JSON value: " + json, e);
        }
        String city = value.path("city").asText();
        assertTrue(value.path("city").isTextual() && city.codePointCount(0, city.length()) <= 12, context + ": " + json);
        assertTrue(value.path("days").isInt() && Set.of(1, 3, 7).contains(value.path("days").intValue()),
                context + ": " + json);
        assertEquals(2, value.size(), context + ": " + json);
    }

    private static String callArguments(String text, String context) {
        Matcher call = CALL.matcher(text.strip());
        assertTrue(call.matches(), context + ": not one call of get_weather: " + text);
        return call.group(1);
    }

    @Test
    void jsonAnswersEndWellInsideTheLimit() {
        for (String thoughts : List.of("", "<think>\nParis.\n</think>")) {
            for (long seed = 1; seed <= 4; seed++) {
                String text = answer(AnswerGrammar.json(schema, !thoughts.isEmpty()), thoughts, seed);
                assertValid(text.strip(), "seed " + seed);
            }
        }
    }

    @Test
    void requiredToolCallsEndWellInsideTheLimit() {
        List<AnswerGrammar.Function> functions = List.of(new AnswerGrammar.Function("get_weather", schema));
        for (String thoughts : List.of("", "<think>\nParis.\n</think>")) {
            for (long seed = 1; seed <= 4; seed++) {
                String text = answer(AnswerGrammar.toolCalls(functions, false, !thoughts.isEmpty()), thoughts, seed);
                assertValid(callArguments(text, "seed " + seed), "seed " + seed);
            }
        }
    }
}
