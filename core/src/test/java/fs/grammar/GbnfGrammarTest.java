package fs.grammar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** GBNF as llama.cpp defines it: what a grammar accepts, byte by byte, and the one-line errors of bad grammars. */
class GbnfGrammarTest {
    /** JSON, written by hand for the test (not produced by {@link JsonSchemaGbnf}). */
    static final String JSON = """
            # JSON, with whitespace anywhere tokens meet
            root   ::= ws value ws
            value  ::= object | array | string | number | ("true" | "false" | "null")
            object ::= "{" ws ( member ( ws "," ws member )* )? ws "}"
            member ::= string ws ":" ws value
            array  ::= "[" ws ( value ( ws "," ws value )* )? ws "]"
            string ::= "\\"" ( [^"\\\\\\x00-\\x1F] | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\\""
            number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
            ws     ::= [ \\t\\n]{0,8}
            """;

    static final String ARITHMETIC = """
            root   ::= expr
            expr   ::= term ( ws [-+] ws term )*
            term   ::= factor ( ws [*/] ws factor )*
            factor ::= number | "(" ws expr ws ")" | "-" factor
            number ::= [0-9]+ ( "." [0-9]+ )?
            ws     ::= " "?
            """;

    private static boolean matches(Grammar g, String text) {
        return g.matches(text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theJsonGrammarAcceptsJsonAndRefusesWhatIsNot() {
        Grammar json = Grammar.parse(JSON);
        for (String ok : new String[] {"{}", "[]", "0", "-1.5e+10", "\"\"", "\"a\\\"b\\u00e9\"", "\"é漢😀\"", "true",
                " { \"a\" : [1, 2, {\"b\": null}], \"c\": \"d\" } ", "[[[[]]]]"}) {
            assertTrue(matches(json, ok), ok);
        }
        for (String bad : new String[] {"", "{", "01", "[1,]", "{\"a\"}", "\"\\x\"", "tru", "\"a", "{} x", "1.", "\"\t\"",
                "[1 2]"}) {
            assertFalse(matches(json, bad), bad);
        }
        assertTrue(json.matchesPrefix("{\"a\": [1, ".getBytes(StandardCharsets.UTF_8)));
        assertFalse(json.matchesPrefix("{\"a\" 1".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void theSameTextIsTheSameGrammarSoThatRequestsShareItsTables() {
        String text = "root ::= [a-z]+ \"!\"";
        Grammar first = Grammar.parse(text);
        assertTrue(first == Grammar.parse(text));
        assertFalse(first == Grammar.parse(text + " # another text"));
    }

    @Test
    void theArithmeticGrammarAcceptsExpressionsAndRefusesOthers() {
        Grammar arithmetic = Grammar.parse(ARITHMETIC);
        for (String ok : new String[] {"1", "1+2", "(1 + 2) * 3.5", "-(-4)/2", "((((7))))", "1 - 2 - 3"}) {
            assertTrue(matches(arithmetic, ok), ok);
        }
        for (String bad : new String[] {"", "1+", "(1", "1)", "1  + 2", "a", "1..2", "+1"}) {
            assertFalse(matches(arithmetic, bad), bad);
        }
    }

    @Test
    void codePointsAreMatchedWholeAndInvalidUtf8IsRefused() {
        Grammar g = Grammar.parse("root ::= [^a] \"é\" [\\u4E00-\\u9FFF]+ .");
        assertTrue(matches(g, "bé漢字x"));
        assertTrue(matches(g, "😀é漢😀"));
        assertFalse(matches(g, "aé漢x"));
        assertFalse(matches(g, "bé" + "x" + "x"));
        // A lone continuation byte, an overlong encoding and a cut-short sequence are not characters.
        assertFalse(g.matches(new byte[] {(byte) 0x80, (byte) 0xC3, (byte) 0xA9, (byte) 0xE6, (byte) 0xBC, (byte) 0xA2, 'x'}));
        assertFalse(g.matches(new byte[] {(byte) 0xC1, (byte) 0x81, (byte) 0xC3, (byte) 0xA9, (byte) 0xE6, (byte) 0xBC, (byte) 0xA2, 'x'}));
        // A prefix that stops inside a character is fine only if some character of the class begins so.
        assertTrue(g.matchesPrefix(new byte[] {'b', (byte) 0xC3}));
        assertFalse(g.matchesPrefix(new byte[] {'b', (byte) 0xC4}), "no é begins with C4");
        assertTrue(g.matchesPrefix(new byte[] {'b', (byte) 0xC3, (byte) 0xA9, (byte) 0xE6}));
        assertFalse(g.matchesPrefix(new byte[] {'b', (byte) 0xC3, (byte) 0xA9, (byte) 0xEF}), "EF begins no CJK ideograph");
    }

    @Test
    void escapesRepetitionsAndComments() {
        Grammar g = Grammar.parse("""
                root ::= "\\x41\\u00e9\\t\\"\\\\" x{2} y{1,} z{0,2} w{1,3} # a comment
                x ::= "x"   # another
                y ::= "y"
                z ::= "z"
                w ::= "w"
                """);
        assertTrue(matches(g, "Aé\t\"\\xxyw"));
        assertTrue(matches(g, "Aé\t\"\\xxyyyzzwww"));
        assertFalse(matches(g, "Aé\t\"\\xyw"), "x{2} needs two");
        assertFalse(matches(g, "Aé\t\"\\xxw"), "y{1,} needs one");
        assertFalse(matches(g, "Aé\t\"\\xxyzzzw"), "z{0,2} allows two");
        assertFalse(matches(g, "Aé\t\"\\xxywwww"), "w{1,3} allows three");
    }

    @Test
    void alternativesGoOnAfterABarAndInsideParentheses() {
        Grammar g = Grammar.parse("root ::= \"a\" |\n  \"b\" | (\n \"c\"\n \"d\" )\n");
        assertTrue(matches(g, "a"));
        assertTrue(matches(g, "b"));
        assertTrue(matches(g, "cd"));
        assertFalse(matches(g, "c"));
    }

    @Test
    void nestedEmptyLoopsEnd() {
        Grammar g = Grammar.parse("root ::= ( e )* \"x\"\ne ::= \"a\"?");
        assertTrue(matches(g, "x"));
        assertTrue(matches(g, "aaax"));
    }

    private static String error(String gbnf) {
        return assertThrows(GrammarException.class, () -> Grammar.parse(gbnf)).getMessage();
    }

    @Test
    void badGrammarsAreRefusedWithOneLineNamingWhere() {
        assertEquals("grammar 1:1: empty grammar (no rule)", error("  # nothing but a comment\n"));
        assertEquals("grammar 1:1: no rule 'root' (the start rule)", error("a ::= \"x\""));
        assertEquals("grammar 2:11: undefined rule 'missing'", error("root ::= a\na ::= \"x\" missing"));
        assertEquals("grammar 1:10: unterminated string literal", error("root ::= \"abc"));
        assertEquals("grammar 1:10: unterminated character class", error("root ::= [a-z"));
        assertEquals("grammar 1:10: unclosed '('", error("root ::= ( \"a\" "));
        assertEquals("grammar 1:6: expected '::=' after rule name 'root'", error("root = \"a\""));
        assertEquals("grammar 1:10: '*' repeats nothing", error("root ::= *"));
        assertEquals("grammar 1:12: unknown escape '\\q'", error("root ::= \"a\\q\""));
        assertEquals("grammar 1:13: repetition {3,2} has its maximum below its minimum", error("root ::= \"a\"{3,2}"));
        assertEquals("grammar 2:1: rule 'root' is defined twice (first at 1:1)", error("root ::= \"a\"\nroot ::= \"b\""));
        assertEquals("grammar 1:14: unexpected ')' in rule 'root'", error("root ::= \"a\" )"));
        assertEquals("grammar 1:1: rule 'root' matches nothing", error("root ::= [^\\x00-\\U0010FFFF]"));
    }

    @Test
    void leftRecursionIsRefusedRatherThanHanging() {
        assertEquals("grammar 2:1: rule 'expr' is left-recursive (expr -> expr)",
                error("root ::= expr\nexpr ::= expr \"+\" \"1\" | \"1\""));
        String indirect = error("root ::= a\na ::= b \"x\"\nb ::= c? a | \"y\"\nc ::= \"c\"");
        assertTrue(indirect.startsWith("grammar 2:1: rule 'a' is left-recursive (a -> b -> a)"), indirect);
        // Right recursion is fine.
        assertTrue(matches(Grammar.parse("root ::= \"1\" ( \"+\" root )?"), "1+1+1"));
    }
}
