package fs.eval;

import fs.FsException;
import java.util.Arrays;

/**
 * How llama-perplexity cuts a tokenized text: consecutive, non-overlapping windows of {@code context} tokens from
 * the start (a tail shorter than a window is left out), each run from an empty cache with no BOS token added
 * (Qwen3's add_bos_token is false, and llama-perplexity adds one only when the vocabulary asks for it). Only the
 * second half of each window is scored, so that every scored token has at least context/2 tokens before it: the
 * logits at positions {@link #firstScored}..{@link #lastScored} predict tokens firstScored+1..context−1.
 *
 * Immutable (the tokens are copied in).
 */
public final class Windows {

    /** The fewest window tokens with anything to score: position context/2 must predict a token in the window. */
    public static final int MIN_CONTEXT = 3;

    private final int[] tokens;
    private final int context;
    private final int count;

    /**
     * @param tokens  the whole text's tokens
     * @param context tokens per window (llama-perplexity's -c)
     * @param count   windows evaluated, from the start
     */
    public Windows(int[] tokens, int context, int count) {
        if (context < MIN_CONTEXT) throw new IllegalArgumentException("a window of " + context + " tokens");
        if (count < 1 || (long) count * context > tokens.length) {
            throw new IllegalArgumentException(count + " windows of " + context + " in " + tokens.length + " tokens");
        }
        this.tokens = Arrays.copyOf(tokens, count * context);
        this.context = context;
        this.count = count;
    }

    /** Tokens per window. */
    public int context() {
        return context;
    }

    /** Windows evaluated. */
    public int count() {
        return count;
    }

    /**
     * The windows of a text, at most {@code maxWindows} of them (llama-perplexity's --chunks; 0 for all). Like
     * llama-perplexity it refuses a text of fewer than 2·context tokens, whatever the limit.
     *
     * @param what names the text in the error
     */
    public static Windows of(int[] tokens, int context, int maxWindows, String what) {
        if (tokens.length < 2L * context) {
            throw new FsException(what + " has only " + tokens.length + " tokens: perplexity with a context of "
                    + context + " needs at least " + 2L * context + " (two windows); give a longer text or a smaller -c");
        }
        int all = tokens.length / context;
        return new Windows(tokens, context, maxWindows > 0 ? Math.min(maxWindows, all) : all);
    }

    /** The first position whose logits are scored: context/2 (the tokens before it are context only). */
    public int firstScored() {
        return context / 2;
    }

    /** Tokens scored per window: context − context/2 − 1. */
    public int scoredPerWindow() {
        return context - firstScored() - 1;
    }

    /** The last position whose logits are scored: context − 2 (they predict the window's last token). */
    public int lastScored() {
        return context - 2;
    }

    /** The tokens of window {@code index}. */
    public int[] window(int index) {
        if (index < 0 || index >= count) throw new IndexOutOfBoundsException(index);
        return Arrays.copyOfRange(tokens, index * context, (index + 1) * context);
    }
}
