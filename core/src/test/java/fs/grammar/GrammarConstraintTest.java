package fs.grammar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import fs.model.Golden;
import fs.tokenizer.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The constraint over Qwen3's real vocabulary (tiny-tied's tokenizer.json): masks agree with the grammar, no dead end. */
class GrammarConstraintTest {
    static final Tokenizer TOKENIZER = Tokenizer.load(Golden.modelDir("tiny-tied"));
    static final TokenVocabulary VOCABULARY = TokenVocabulary.of(TOKENIZER);
    static final int IM_END = TOKENIZER.tokenId("<|im_end|>").orElseThrow();
    static final int LOGITS = 151_936;

    /** The ids a mask leaves finite. */
    static List<Integer> allowed(GrammarConstraint c) {
        float[] logits = new float[LOGITS];
        c.mask(logits);
        List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < logits.length; i++) if (logits[i] != Float.NEGATIVE_INFINITY) ids.add(i);
        return ids;
    }

    /**
     * Walks a grammar by random allowed tokens until only the end token is left or {@code steps} are taken; checks on
     * the way that the mask is never empty and agrees with allows(), and returns the bytes written.
     */
    static byte[] randomWalk(Grammar grammar, long seed, int steps) {
        Random random = new Random(seed);
        GrammarConstraint c = new GrammarConstraint(grammar, VOCABULARY, new int[] {IM_END});
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        float[] logits = new float[LOGITS];
        for (int step = 0; step < steps; step++) {
            java.util.Arrays.fill(logits, 0f);
            c.mask(logits);
            List<Integer> ids = new ArrayList<>();
            for (int i = 0; i < logits.length; i++) if (logits[i] == 0f) ids.add(i);
            assertFalse(ids.isEmpty(), "dead end after " + text);
            // allows() agrees with the mask, on allowed tokens and on a few random others.
            for (int k = 0; k < 5; k++) assertTrue(c.allows(ids.get(random.nextInt(ids.size()))));
            for (int k = 0; k < 20; k++) {
                int t = random.nextInt(LOGITS);
                assertEquals(logits[t] == 0f, c.allows(t), "token " + t + " after " + text);
            }
            if (ids.equals(List.of(IM_END))) return text.toByteArray();
            // Prefer tokens that close things sometimes, so that walks end: pick the end token when allowed, half the time.
            int pick = ids.contains(IM_END) && random.nextBoolean() ? IM_END : ids.get(random.nextInt(ids.size()));
            c.accept(pick);
            if (pick == IM_END) return text.toByteArray();
            text.writeBytes(TOKENIZER.tokenBytes(pick));
        }
        return text.toByteArray();
    }

    @Test
    void randomWalksOverTheVocabularyNeverDeadEndAndStayInTheGrammar() throws Exception {
        List<Grammar> grammars = List.of(Grammar.parse(GbnfGrammarTest.JSON), Grammar.parse(GbnfGrammarTest.ARITHMETIC),
                Grammar.parse("root ::= [^a] \"é\" [\\u4E00-\\u9FFF]{1,4} [\\U0001F600-\\U0001F64F]"),
                Grammar.fromJsonSchema(new ObjectMapper().readTree("""
                        {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                         "tags": {"type": "array", "items": {"enum": ["a", "b", 3]}, "maxItems": 3},
                         "when": {"type": "string", "format": "date-time"}},
                         "required": ["name"]}""")),
                Grammar.anyJsonObject());
        for (Grammar g : grammars) {
            for (long seed = 0; seed < 4; seed++) {
                byte[] text = randomWalk(g, seed, 40);
                assertTrue(g.matchesPrefix(text), new String(text));
            }
        }
    }

    @Test
    void endTokensOnlyWhereTheGrammarMayEndAndAloneWhenItCannotGoOn() {
        Grammar g = Grammar.parse("root ::= \"ab\" \"c\"?");
        GrammarConstraint c = new GrammarConstraint(g, VOCABULARY, new int[] {IM_END});
        assertFalse(c.allows(IM_END));
        int ab = TOKENIZER.tokenId("ab").orElseThrow();
        assertTrue(c.allows(ab));
        c.accept(ab);
        assertTrue(c.allows(IM_END));
        int cToken = TOKENIZER.tokenId("c").orElseThrow();
        assertTrue(allowed(c).contains(cToken));
        c.accept(cToken);
        assertEquals(List.of(IM_END), allowed(c));
    }

    @Test
    void aTriggeredConstraintIsFreeUntilItsTrigger() {
        int trigger = TOKENIZER.tokenId("<tool_call>").orElseThrow();
        GrammarConstraint c = GrammarConstraint.triggered(Grammar.parse("root ::= \"{}\""), VOCABULARY, new int[] {IM_END}, trigger);
        int hello = TOKENIZER.tokenId("hello").orElseThrow();
        assertTrue(c.allows(hello));
        assertEquals(LOGITS, allowed(c).size());
        c.accept(hello);
        c.accept(trigger);
        assertFalse(c.allows(hello));
        assertTrue(c.allows(TOKENIZER.tokenId("{}").orElseThrow()));
        assertTrue(c.allows(TOKENIZER.tokenId("{").orElseThrow()));
    }

    @Test
    void oneGrammarSharedByThreadsAnswersAsItDoesAlone() throws Exception {
        String schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"maxLength\":6},"
                + "\"b\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"maxItems\":3}},\"required\":[\"a\",\"b\"]}";
        // The masks along walks of a grammar used alone are the reference; a second copy is walked by four threads at once.
        Grammar alone = Grammar.fromJsonSchema(new ObjectMapper().readTree(schema));
        // Another text (a comment added), so that it is another grammar, its tables built by the threads themselves.
        Grammar shared = Grammar.parse(JsonSchemaGbnf.toGbnf(new ObjectMapper().readTree(schema)) + "# a copy\n");
        assertFalse(alone == shared);
        List<List<List<Integer>>> expected = new ArrayList<>();
        for (int seed = 0; seed < 4; seed++) expected.add(masksAlong(alone, seed));
        List<java.util.concurrent.Future<List<List<Integer>>>> results = new ArrayList<>();
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(4)) {
            for (int seed = 0; seed < 4; seed++) {
                int s = seed;
                results.add(pool.submit(() -> masksAlong(shared, s)));
            }
            for (int seed = 0; seed < 4; seed++) assertEquals(expected.get(seed), results.get(seed).get());
        }
    }

    /** The allowed ids at each step of a walk by random allowed tokens (a fixed seed: the same walk each time). */
    private static List<List<Integer>> masksAlong(Grammar grammar, long seed) {
        Random random = new Random(seed);
        GrammarConstraint c = new GrammarConstraint(grammar, VOCABULARY, new int[] {IM_END});
        List<List<Integer>> masks = new ArrayList<>();
        for (int step = 0; step < 12; step++) {
            List<Integer> ids = allowed(c);
            masks.add(ids);
            int pick = ids.get(random.nextInt(ids.size()));
            if (pick == IM_END) break;
            c.accept(pick);
        }
        return masks;
    }
}
