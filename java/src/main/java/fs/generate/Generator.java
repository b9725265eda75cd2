package fs.generate;

import fs.FsException;
import fs.model.Probe;
import fs.model.Qwen3Model;
import java.util.Arrays;
import java.util.function.BooleanSupplier;

/**
 * Generates tokens with a {@link Qwen3Model}, streaming each one to a listener. The generator remembers which tokens
 * the KV cache holds, so a prompt that starts with them (the next turn of a chat) only runs its new tokens.
 */
public final class Generator {

    /** Sees each generated token as soon as it is chosen; stop tokens are not passed on. */
    @FunctionalInterface
    public interface TokenListener {
        void onToken(int id);
    }

    /** The tokens generated (without the stop token), why generation ended, and its timings. */
    public record Generation(int[] ids, StopReason stopReason, GenerationStats stats) {}

    private final Qwen3Model model;
    private final int[] stopIds;
    private final int[] cached; // cached[0..cachedLength) are the tokens whose keys and values the cache holds
    private int cachedLength;
    private final float[] logits;
    private final int[] oneToken = new int[1];
    private final Sampler sampler;
    private final boolean argmaxOnDevice; // greedy without a penalty needs no logits on the host

    /** A generator that stops at any of {@code stopIds} and chooses tokens with {@code params} (one seeded stream). */
    public Generator(Qwen3Model model, int[] stopIds, SamplingParams params) {
        this.model = model;
        this.stopIds = stopIds.clone();
        this.sampler = new Sampler(params);
        this.argmaxOnDevice = params.isGreedy() && params.repeatPenalty() == 1f;
        this.cached = new int[model.shape().contextLength()];
        this.logits = new float[model.config().vocabSize()];
    }

    /** Forgets the cached tokens: the next prompt runs from position 0. */
    public void reset() {
        cachedLength = 0;
    }

    /** Throws the user-facing error when a prompt plus maxNewTokens (if ≥ 0) cannot fit the context. */
    public void checkFits(int promptTokens, int maxNewTokens) {
        int context = model.shape().contextLength();
        if (promptTokens < 1) throw new FsException("the prompt is empty: there is nothing to generate from");
        if (promptTokens > context || (maxNewTokens >= 0 && (long) promptTokens + maxNewTokens > context)) {
            String wanted = maxNewTokens >= 0 ? promptTokens + " prompt tokens + " + maxNewTokens + " new tokens (-n)"
                    : promptTokens + " prompt tokens";
            throw new FsException(wanted + " do not fit the context of " + context
                    + " tokens; raise --ctx (the model allows up to " + model.config().maxPositionEmbeddings()
                    + ") or shorten the prompt or -n");
        }
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
        checkFits(prompt.length, maxNewTokens);
        int context = model.shape().contextLength();
        int limit = maxNewTokens >= 0 ? maxNewTokens : context - prompt.length;
        int[] generated = new int[limit];

        long start = System.nanoTime();
        // At least the last prompt token must run: its logits choose the first new token.
        int reused = Math.min(commonPrefix(prompt), prompt.length - 1);
        cachedLength = reused;
        if (!prefill(prompt, stopRequested)) {
            GenerationStats stats =
                    new GenerationStats(cachedLength - reused, reused, System.nanoTime() - start, 0, 0, 0);
            return new Generation(new int[0], StopReason.CANCELLED, stats);
        }
        int next = limit > 0 ? chooseNext() : -1;
        long prefillEnd = System.nanoTime();

        int count = 0;
        int decodeSteps = 0;
        StopReason reason;
        while (true) {
            if (count == limit) {
                reason = maxNewTokens >= 0 ? StopReason.TOKEN_LIMIT : StopReason.CONTEXT_FULL;
                break;
            }
            if (isStop(next)) {
                reason = StopReason.END_OF_SEQUENCE;
                break;
            }
            if (stopRequested.getAsBoolean()) {
                reason = StopReason.CANCELLED;
                break;
            }
            generated[count++] = next;
            listener.onToken(next);
            if (count == limit) continue;
            // A token runs only to choose the one after it: once a stop is requested, it need not.
            if (stopRequested.getAsBoolean()) {
                reason = StopReason.CANCELLED;
                break;
            }
            oneToken[0] = next;
            model.forward(oneToken, cachedLength, Probe.NONE);
            cached[cachedLength++] = next;
            decodeSteps++;
            next = chooseNext();
        }
        long end = System.nanoTime();

        GenerationStats stats = new GenerationStats(
                prompt.length - reused, reused, prefillEnd - start, count, decodeSteps, end - prefillEnd);
        return new Generation(Arrays.copyOf(generated, count), reason, stats);
    }

    /**
     * Runs the prompt's tokens past the cached ones, a batch at a time, each batch joining the cache once it ran;
     * returns false when a stop was requested before the last batch.
     */
    private boolean prefill(int[] prompt, BooleanSupplier stopRequested) {
        int batchRows = model.shape().batchRows();
        while (cachedLength < prompt.length) {
            if (stopRequested.getAsBoolean()) return false;
            int rows = Math.min(batchRows, prompt.length - cachedLength);
            model.forward(Arrays.copyOfRange(prompt, cachedLength, cachedLength + rows), cachedLength, Probe.NONE);
            System.arraycopy(prompt, cachedLength, cached, cachedLength, rows);
            cachedLength += rows;
        }
        return true;
    }

    /** The next token from the logits of the last row; the penalty sees every token so far (prompt and output). */
    private int chooseNext() {
        int row = model.logitRows() - 1;
        if (argmaxOnDevice) return model.argmax(row);
        model.readLogits(row, logits);
        return sampler.sample(logits, cached, cachedLength);
    }

    private int commonPrefix(int[] prompt) {
        int n = Math.min(cachedLength, prompt.length);
        int i = 0;
        while (i < n && cached[i] == prompt[i]) i++;
        return i;
    }

    private boolean isStop(int id) {
        for (int stop : stopIds) if (stop == id) return true;
        return false;
    }
}
