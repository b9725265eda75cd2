package fs.server;

import fs.generate.TokenSink;
import fs.generate.GenerationStats;
import fs.generate.StopReason;
import fs.generate.TokenLogprobs;
import fs.tokenizer.StreamingDecoder;
import fs.tokenizer.Tokenizer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The sink of one request: turns its tokens (and their logprobs) into text on the engine's thread (so that the
 * tokenizer's decoding tables are only ever touched by that one thread) and hands text and the end to the request's
 * HTTP thread through a queue, so the engine never waits for a client. Unbounded: a request produces at most a
 * context's worth of events.
 */
final class AnswerQueue implements TokenSink {

    /** What the HTTP thread takes from the queue. */
    sealed interface Event {
        /**
         * One token's text (possibly empty: part of a character, or a special token), and its logprobs entry when
         * the request asked for logprobs (else null).
         */
        record Token(String text, LogprobEntry logprobs) implements Event {}

        /** The end: the decoder's last bytes, why it ended and the counts. */
        record Done(String text, StopReason reason, GenerationStats stats) implements Event {}

        record Failed(RuntimeException error) implements Event {}
    }

    private final Tokenizer tokenizer;
    private final StreamingDecoder decoder;
    private final int knownIds;
    private final ServerMetrics metrics;
    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private int textCodePoints; // of the text so far: where the next token's text starts

    AnswerQueue(Tokenizer tokenizer, ServerMetrics metrics) {
        // Special tokens (e.g. a stray <|im_start|>) are not text a client should see; <think> is not special.
        this.tokenizer = tokenizer;
        this.decoder = tokenizer.streamingDecoder(true);
        this.knownIds = tokenizer.vocabSize();
        this.metrics = metrics;
    }

    @Override
    public void onToken(int id, TokenLogprobs logprobs) {
        // The model's padding rows past the vocabulary have no text (as Hugging Face's decode skips them).
        String text = id < knownIds ? decoder.push(id) : "";
        LogprobEntry entry = logprobs != null ? LogprobEntry.of(logprobs, tokenizer, textCodePoints) : null;
        textCodePoints += text.codePointCount(0, text.length());
        events.add(new Event.Token(text, entry));
    }

    @Override
    public void onDone(StopReason reason, GenerationStats stats) {
        metrics.generationDone(stats);
        events.add(new Event.Done(decoder.flush(), reason, stats));
    }

    @Override
    public void onError(RuntimeException e) {
        events.add(new Event.Failed(e));
    }

    /** The next event, waiting for it at most {@code timeout}; null when none came. */
    Event poll(java.time.Duration timeout) throws InterruptedException {
        return events.poll(timeout.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
    }
}
