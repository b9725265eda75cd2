package fs.grammar;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The matcher never dead-ends, over random grammars: rules calling each other (right recursion, rules that may match
 * nothing, rules that match nothing at all), classes of ASCII and beyond, repetitions of every kind. Each grammar that
 * compiles is walked by random allowed tokens of Qwen3's vocabulary; at every step some token must be allowed. The
 * few so ambiguous that their parses multiply past the matcher's bound must be refused in one line instead.
 */
class RandomGrammarWalkTest {
    private static final int WALKS = 16;
    private static final String[] CLASSES = {"[a-c]", "[^a-z]", "[0-9]", ".", "[\\u00e0-\\u00ff]", "[\\u4e00-\\u4e10]",
            "[ \\t\\n]", "[\\U0001F600-\\U0001F602]", "[^\\x00-\\x7F]", "[\"\\\\]"};
    private static final String[] LITERALS = {"\"a\"", "\"{\"", "\"}\"", "\" \"", "\"\\n\"", "\"é\"", "\"ab\"",
            "\"hello\"", "\"\\\"\"", "\"<tool_call>\"", "\"\""};

    private static String expression(Random random, int rules, int depth) {
        int items = 1 + random.nextInt(3);
        StringBuilder sequence = new StringBuilder();
        for (int i = 0; i < items; i++) {
            String item = switch (depth > 2 ? random.nextInt(3) : random.nextInt(5)) {
                case 0 -> CLASSES[random.nextInt(CLASSES.length)];
                case 1 -> LITERALS[random.nextInt(LITERALS.length)];
                case 2 -> "r" + random.nextInt(rules);
                case 3 -> "( " + expression(random, rules, depth + 1) + " | " + expression(random, rules, depth + 1) + " )";
                default -> "( " + expression(random, rules, depth + 1) + " )";
            };
            String[] repeats = {"", "", "", "?", "*", "+", "{2}", "{0,3}", "{1,}"};
            sequence.append(i == 0 ? "" : " ").append(item).append(repeats[random.nextInt(repeats.length)]);
        }
        return sequence.toString();
    }

    @Test
    void randomGrammarsNeverDeadEnd() {
        int walked = 0, ambiguous = 0;
        for (long seed = 0; walked < WALKS && seed < 400; seed++) {
            Random random = new Random(seed);
            int rules = 1 + random.nextInt(4);
            StringBuilder gbnf = new StringBuilder("root ::= " + expression(random, rules, 0) + "\n");
            for (int r = 0; r < rules; r++) gbnf.append("r").append(r).append(" ::= ").append(expression(random, rules, 0)).append('\n');
            Grammar grammar;
            try {
                grammar = Grammar.parse(gbnf.toString());
            } catch (GrammarException refused) {
                // Left recursion or a root that matches nothing: refused, as it should be, and not walked.
                assertTrue(refused.getMessage().contains("left-recursive") || refused.getMessage().contains("matches nothing"),
                        refused.getMessage());
                continue;
            }
            byte[] text;
            try {
                text = GrammarConstraintTest.randomWalk(grammar, seed, 8);
            } catch (GrammarException tooAmbiguous) {
                // Exponentially many parses at once: refused with one line rather than slowing to a halt.
                assertTrue(tooAmbiguous.getMessage().startsWith("grammar too ambiguous"), tooAmbiguous.getMessage());
                ambiguous++;
                continue;
            }
            assertTrue(grammar.matchesPrefix(text), gbnf + " wrote " + new String(text));
            walked++;
        }
        assertTrue(walked == WALKS && ambiguous < WALKS / 4, walked + " grammars walked, " + ambiguous + " too ambiguous");
    }
}
