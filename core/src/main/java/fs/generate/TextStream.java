package fs.generate;

import fs.tokenizer.StreamingDecoder;
import fs.tokenizer.Tokenizer;
import java.io.PrintWriter;

/**
 * Prints generated tokens as text while they come: bytes of a character split across tokens wait for the rest
 * (UTF-8 safe), and with {@code hideThinking} the {@code <think>} block is left out. Ids the tokenizer does not know
 * (the model's padding rows past the vocabulary: Qwen3's embedding has 151,936 rows for 151,669 tokens) print
 * nothing, as Hugging Face's decode skips them; a generation must not die on a token it sampled.
 */
public final class TextStream implements Generator.TokenListener {
    private final StreamingDecoder decoder;
    private final int knownIds;
    private final ThinkFilter thinkFilter; // null: show everything
    private final PrintWriter out;

    public TextStream(Tokenizer tokenizer, boolean hideThinking, PrintWriter out) {
        this.decoder = tokenizer.streamingDecoder();
        this.knownIds = tokenizer.vocabSize();
        this.thinkFilter = hideThinking ? new ThinkFilter() : null;
        this.out = out;
    }

    @Override
    public void onToken(int id) {
        if (id >= knownIds) return;
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
