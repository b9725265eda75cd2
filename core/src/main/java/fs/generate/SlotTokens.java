package fs.generate;

import java.util.Arrays;

/**
 * The tokens whose keys and values one KV cache slot holds, position 0 on: what lets a new prompt on the slot reuse the
 * prefix it shares with them (the next turn of a chat, or a request that repeats a system prompt), and what the
 * repetition penalty looks at (prompt and generated tokens so far). Not thread-safe: owned by the thread that runs
 * the slot's forwards.
 */
final class SlotTokens {
    private int[] tokens;
    private int length;

    SlotTokens(int capacity) {
        tokens = new int[Math.min(capacity, 1024)];
    }

    int length() {
        return length;
    }

    /** The tokens, valid up to {@link #length}; the array is the slot's own, not a copy. */
    int[] array() {
        return tokens;
    }

    /** How many leading tokens of {@code prompt} the slot holds. */
    int commonPrefix(int[] prompt) {
        int n = Math.min(length, prompt.length);
        int i = 0;
        while (i < n && tokens[i] == prompt[i]) i++;
        return i;
    }

    /**
     * Keeps the longest prefix of the slot that {@code prompt} may reuse and returns its length: the common prefix, but
     * never the whole prompt, since the last prompt token must run for its logits to choose the next token.
     */
    int reuse(int[] prompt) {
        length = Math.min(commonPrefix(prompt), prompt.length - 1);
        return length;
    }

    /** Forgets every token: the slot's next prompt runs from position 0. */
    void clear() {
        length = 0;
    }

    /** Records that positions length.. now hold {@code count} tokens of {@code source} from {@code from}. */
    void append(int[] source, int from, int count) {
        ensure(length + count);
        System.arraycopy(source, from, tokens, length, count);
        length += count;
    }

    void append(int token) {
        ensure(length + 1);
        tokens[length++] = token;
    }

    private void ensure(int needed) {
        if (needed > tokens.length) tokens = Arrays.copyOf(tokens, Math.max(needed, 2 * tokens.length));
    }
}
