package fs.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import fs.tokenizer.Tokenizer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class TextStreamTest {
    private static Tokenizer tokenizer;

    @BeforeAll
    static void load() {
        tokenizer = Tokenizer.load(Path.of(System.getProperty("fs.repo"), "models", "tiny-tied"));
    }

    private static String stream(boolean hideThinking, int... ids) {
        StringWriter text = new StringWriter();
        TextStream stream = new TextStream(tokenizer, hideThinking, new PrintWriter(text));
        for (int id : ids) stream.onToken(id);
        stream.finish();
        return text.toString();
    }

    @Test
    void printsWhatTheTokenizerDecodes() {
        int[] ids = tokenizer.encode("Hello, wörld 世界!");
        assertEquals("Hello, wörld 世界!", stream(false, ids));
    }

    @Test
    void paddingIdsPastTheVocabularyPrintNothing() {
        int[] hello = tokenizer.encode("Hello");
        int padding = tokenizer.vocabSize(); // the first embedding row with no token
        assertEquals("HelloHello", stream(false, hello[0], padding, 151_935, hello[0]));
    }

    @Test
    void hidesTheThinkBlock() {
        int[] ids = tokenizer.encode("<think>\nhmm\n</think>\n\nAnswer");
        assertEquals("Answer", stream(true, ids));
        assertEquals("<think>\nhmm\n</think>\n\nAnswer", stream(false, ids));
    }
}
