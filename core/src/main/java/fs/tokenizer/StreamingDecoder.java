package fs.tokenizer;

/**
 * Turns generated ids into text as they come, never returning part of a character: bytes that could still become a
 * character wait for the next id, so the concatenation of every {@link #push} and the final {@link #flush} equals
 * {@link Tokenizer#decode} of all the ids. Not thread-safe: one per generation.
 */
public final class StreamingDecoder {
    private final Tokenizer tokenizer;
    private final boolean skipSpecial;
    private final Tokenizer.ByteSink pending = new Tokenizer.ByteSink(16);

    StreamingDecoder(Tokenizer tokenizer, boolean skipSpecial) {
        this.tokenizer = tokenizer;
        this.skipSpecial = skipSpecial;
    }

    /** Adds one id and returns the text it completes (possibly empty). */
    public String push(int id) {
        tokenizer.appendBytes(id, skipSpecial, pending);
        StringBuilder text = new StringBuilder();
        int used = Utf8.decode(pending.array(), pending.length(), text, false);
        pending.consume(used);
        return text.toString();
    }

    /** Returns what is left (an unfinished character becomes U+FFFD) and empties the decoder. */
    public String flush() {
        String text = Utf8.decodeLossy(pending.array(), pending.length());
        pending.consume(pending.length());
        return text;
    }
}
