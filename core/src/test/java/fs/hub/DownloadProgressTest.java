package fs.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class DownloadProgressTest {
    @Test
    void onATerminalTheBarIsRedrawnInPlaceAFewTimesAndEndsTheLine() {
        StringWriter out = new StringWriter();
        DownloadProgress progress = new DownloadProgress(new PrintWriter(out), true);
        progress.start("model.safetensors", 2_000_000, 500_000);
        for (int i = 0; i < 1_500; i++) progress.advance(1_000); // far faster than ten redraws a second
        progress.finish(true);
        String text = out.toString();
        long redraws = text.chars().filter(c -> c == '\r').count();
        assertTrue(redraws >= 2 && redraws <= 20, redraws + " redraws: " + text);
        assertTrue(text.contains("model.safetensors  25% [######------------------] 488 KiB / 1.9 MiB"), text);
        assertTrue(text.contains("model.safetensors 100% [########################] 1.9 MiB / 1.9 MiB"), text);
        assertTrue(text.endsWith(System.lineSeparator()), "the last redraw ends its line");
        assertEquals(1, text.chars().filter(c -> c == '\n').count(), "one line on screen");
    }

    @Test
    void elsewhereEachFileIsOneLineWhenDone() {
        StringWriter out = new StringWriter();
        DownloadProgress progress = new DownloadProgress(new PrintWriter(out), false);
        progress.start("tokenizer.json", 11_422_654, 0);
        progress.advance(11_422_654);
        progress.finish(true);
        progress.start("broken.json", 10, 0);
        progress.finish(false);
        String text = out.toString();
        assertFalse(text.contains("\r"));
        assertTrue(text.startsWith("downloaded tokenizer.json: 10.9 MiB in "), text);
        assertEquals(1, text.lines().count(), "a failed file prints nothing: the error says it");
    }
}
