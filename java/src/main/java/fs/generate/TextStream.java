package fs.generate;

import fs.tokenizer.StreamingDecoder;
import java.io.PrintWriter;

/**
 * Prints generated tokens as text while they come: bytes of a character split across tokens wait for the rest
 * (UTF-8 safe), and with {@code hideThinking} the {@code <think>} block is left out.
 */
public final class TextStream implements Generator.TokenListener {
    private final StreamingDecoder decoder;
    private final ThinkFilter thinkFilter; // null: show everything
    private final PrintWriter out;

    public TextStream(StreamingDecoder decoder, boolean hideThinking, PrintWriter out) {
        this.decoder = decoder;
        this.thinkFilter = hideThinking ? new ThinkFilter() : null;
        this.out = out;
    }

    @Override
    public void onToken(int id) {
        print(decoder.push(id));
    }

    /** Prints what was held back (an incomplete character, a partial tag) at the end of a generation. */
    public void finish() {
        print(decoder.flush());
        if (thinkFilter != null) write(thinkFilter.flush());
    }

    private void print(String text) {
        write(thinkFilter != null ? thinkFilter.push(text) : text);
    }

    private void write(String text) {
        if (!text.isEmpty()) {
            out.print(text);
            out.flush();
        }
    }
}
