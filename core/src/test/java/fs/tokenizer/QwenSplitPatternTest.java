package fs.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The hand-compiled Qwen split must cut text exactly where java.util.regex cuts it with the regex itself. */
class QwenSplitPatternTest {
    private static final Pattern REGEX = PreTokenizer.compile(QwenSplitPattern.REGEX);
    private static final String ALPHABET = "aZſKé\u0301' \t\n\r\u00A0\u3000\u0085\u2028\u000B1٣½Ⅻ.,!?-_'\"«你好👍\uD83D\u200D";

    @Test
    void cutsWhereTheRegexCuts() {
        SplittableRandom random = new SplittableRandom(11);
        int[] alphabet = ALPHABET.codePoints().toArray();
        for (int n = 0; n < 20_000; n++) {
            StringBuilder text = new StringBuilder();
            int length = 1 + random.nextInt(16);
            for (int k = 0; k < length; k++) {
                if (random.nextInt(6) == 0) text.append(List.of("'s", "'RE", "'ll", "'ſ", "'Ve", "'d", "'m", "'T").get(random.nextInt(8)));
                else text.appendCodePoint(alphabet[random.nextInt(alphabet.length)]);
            }
            assertEquals(regexPieces(text.toString()), handPieces(text.toString()), () -> "text [" + text + "]");
        }
    }

    @Test
    void coversEveryBmpCharacter() {
        for (char c = 0; c < Character.MAX_VALUE; c++) {
            String text = "x" + c + c + " " + c + "\n" + c + "'s" + c + "1";
            int codePoint = c;
            assertEquals(regexPieces(text), handPieces(text), () -> String.format("U+%04X", codePoint));
        }
    }

    private static List<String> regexPieces(String text) {
        List<String> pieces = new ArrayList<>();
        Matcher matcher = REGEX.matcher(text);
        int last = 0;
        while (matcher.find()) {
            if (matcher.start() > last) pieces.add("gap:" + text.substring(last, matcher.start()));
            pieces.add(matcher.group());
            last = matcher.end();
        }
        if (last < text.length()) pieces.add("gap:" + text.substring(last));
        return pieces;
    }

    private static List<String> handPieces(String text) {
        List<String> pieces = new ArrayList<>();
        for (int start = 0, end; start < text.length(); start = end) {
            end = QwenSplitPattern.pieceEnd(text, start);
            pieces.add(text.substring(start, end));
        }
        return pieces;
    }
}
