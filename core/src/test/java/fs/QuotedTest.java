package fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class QuotedTest {
    @Test
    void quotesAShortPlainTextAsItIs() {
        assertEquals("'qwen3'", Quoted.quote("qwen3"));
        assertEquals("''", Quoted.quote(""));
        assertEquals("'é 中文 😀'", Quoted.quote("é 中文 😀"));
    }

    @Test
    void escapesLineBreaksAndOtherControlCharacters() {
        assertEquals("'scal\\u000d'", Quoted.quote("scal\r"));
        assertEquals("'a\\u000ab\\u0000c\\u007f\\u0085\\u2028\\u2029'", Quoted.quote("a\nb\0c\u007f\u0085\u2028\u2029"));
    }

    @Test
    void escapesLoneSurrogatesButKeepsPairs() {
        assertEquals("'\\ud800x\\udc00'", Quoted.quote("\ud800x\udc00"));
        assertEquals("'\ud83d\ude00'", Quoted.quote("\ud83d\ude00"));
    }

    @Test
    void cutsALongTextAtSixtyCharactersAndSaysSo() {
        assertEquals("'" + "x".repeat(60) + "'", Quoted.quote("x".repeat(60)));
        assertEquals("'" + "x".repeat(60) + "…'", Quoted.quote("x".repeat(2000)));
        // A pair counts as one character and is never cut in half.
        String emoji = "\ud83d\ude00".repeat(100);
        assertEquals("'" + "\ud83d\ude00".repeat(60) + "…'", Quoted.quote(emoji));
        // Escapes make the quoted text longer, but it stays one short line.
        String quoted = Quoted.quote("\n".repeat(2000));
        assertEquals(2 + 60 * 6 + 1, quoted.length());
        assertTrue(quoted.endsWith("…'"));
    }
}
