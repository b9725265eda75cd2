package fs.generate;

import fs.model.ModelConfig;
import fs.model.Probe;
import fs.model.SingleSequence;
import java.util.Arrays;
import java.util.function.BooleanSupplier;

/**
 * Generates tokens for one sequence on the calling thread, streaming each one to a listener: the one-sequence case of
 * what the {@link Scheduler} does for many, by the same rules ({@link RequestProgress}: when a request fits, when a
 * chosen token ends it, what its counts and times are). It remembers which tokens the sequence's KV cache holds, so a
 * prompt that starts with them (the next turn of a chat) only runs its new tokens. Not thread-safe, as the backend.
 */
public final class Generator {

    /** Sees each generated token as soon as it is chosen; stop tokens are not passed on. */
    @FunctionalInterface
    public interface TokenListener {
        void onToken(int id);
    }

    /** The tokens generated (without the stop token), why generation ended, and its timings. */
    public record Generation(int[] ids, StopReason stopReason, GenerationStats stats) {}

    private final SingleSequence sequence;
    private final int[] stopIds;
    private final SlotTokens cached; // the tokens whose keys and values the sequence's cache holds
    private final int[] oneToken = new int[1];
    private final TokenPicker picker;

    /**
     * A generator on {@code sequence} (whose cache it takes over) that stops at any of {@code stopIds} and chooses
     * tokens with {@code params} (one seeded stream).
     */
    public Generator(SingleSequence sequence, int[] stopIds, SamplingParams params) {
        this.sequence = sequence;
        this.stopIds = stopIds.clone();
        this.picker = new TokenPicker(params, -1);
        this.cached = new SlotTokens(sequence.shape().contextLength());
    }

    /** Forgets the cached tokens: the next prompt runs from position 0. */
    public void reset() {
        cached.clear();
    }

    /** Throws the user-facing error when a prompt plus maxNewTokens (if ≥ 0) cannot fit the context. */
    public void checkFits(int promptTokens, int maxNewTokens) {
        checkFits(promptTokens, maxNewTokens, sequence.shape().contextLength(), sequence.config());
    }

    /**
     * The same for a sequence of {@code contextLength} positions of a {@code config} model not allocated yet, so that
     * a prompt that cannot fit is refused before the weights are loaded.
     */
    public static void checkFits(int promptTokens, int maxNewTokens, int contextLength, ModelConfig config) {
        RequestProgress.checkFits(promptTokens, maxNewTokens, contextLength, " (-n)",
                "; raise --ctx (the model allows up to " + config.maxPositionEmbeddings()
                        + ") or shorten the prompt or -n");
    }

    /**
     * Runs the prompt (reusing the cached prefix it shares with the previous call) and generates up to
     * {@code maxNewTokens} tokens (negative: until a stop token or the end of the context).
     */
    public Generation generate(int[] prompt, int maxNewTokens, TokenListener listener) {
        return generate(prompt, maxNewTokens, listener, () -> false);
    }

    /**
     * As {@link #generate(int[], int, TokenListener)}, but ends early, with {@link StopReason#CANCELLED}, once
     * {@code stopRequested} (which may be set from another thread, e.g. by Ctrl-C) says so: it is asked before each
     * batch of the prompt and before each new token. What ran stays in the cache, so the next call reuses it.
     */
    public Generation generate(int[] prompt, int maxNewTokens, TokenListener listener, BooleanSupplier stopRequested) {
        return generate(prompt, maxNewTokens, listener, stopRequested, null);
    }

    /**
     * As {@link #generate(int[], int, TokenListener, BooleanSupplier)}, choosing only tokens that {@code constraint}
     * (null: none) allows; it is this call's, advanced on the caller's thread.
     */
    public Generation generate(int[] prompt, int maxNewTokens, TokenListener listener, BooleanSupplier stopRequested,
                               TokenConstraint constraint) {
        checkFits(prompt.length, maxNewTokens);
        RequestProgress progress =
                new RequestProgress(prompt.length, maxNewTokens, sequence.shape().contextLength(), stopIds);
        int[] generated = new int[progress.limit()];
        // At least the last prompt token must run: its logits choose the first new token.
        progress.started(cached.reuse(prompt), System.nanoTime());
        StopReason reason = prefill(prompt, stopRequested) ? progress.prefilled(System.nanoTime()) : StopReason.CANCELLED;
        int generatedFrom = prompt.length; // this answer's tokens: what the presence and frequency penalties count
        while (reason == null) {
            int next = chooseNext(generatedFrom, constraint);
            reason = progress.endsBefore(next, stopRequested.getAsBoolean());
            if (reason != null) break;
            generated[progress.generated()] = next;
            listener.onToken(next);
            reason = progress.delivered();
            if (reason != null) break;
            // A token runs only to choose the one after it: once a stop is requested, it need not.
            if (stopRequested.getAsBoolean()) {
                reason = StopReason.CANCELLED;
                break;
            }
            oneToken[0] = next;
            sequence.forward(oneToken, cached.length(), Probe.NONE);
            cached.append(next);
            progress.decoded();
        }
        GenerationStats stats = progress.stats(cached.length(), System.nanoTime());
        return new Generation(Arrays.copyOf(generated, progress.generated()), reason, stats);
    }

    /**
     * Runs the prompt's tokens past the cached ones, a batch at a time, each batch joining the cache once it ran;
     * returns false when a stop was requested before the last batch.
     */
    private boolean prefill(int[] prompt, BooleanSupplier stopRequested) {
        int batchRows = sequence.shape().batchRows();
        while (cached.length() < prompt.length) {
            if (stopRequested.getAsBoolean()) return false;
            int from = cached.length();
            int rows = Math.min(batchRows, prompt.length - from);
            sequence.forward(Arrays.copyOfRange(prompt, from, from + rows), from, Probe.NONE);
            cached.append(prompt, from, rows);
        }
        return true;
    }

    /**
     * The next token from the logits of the last row; the repetition penalty sees every token so far (prompt and
     * output), the presence and frequency penalties the tokens from {@code generatedFrom} on (this answer's).
     */
    private int chooseNext(int generatedFrom, TokenConstraint constraint) {
        return picker.pick(sequence.buffers(), sequence.logitRows() - 1, cached, generatedFrom,
                sequence.config().vocabSize(), constraint);
    }

}
