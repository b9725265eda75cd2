package fs.api;

import fs.generate.GenerationStats;
import fs.generate.TokenLogprobs;
import fs.generate.TokenSink;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The sink of one {@link Chat#send}: hands the scheduler's tokens to the sending thread through a queue, so that
 * decoding them and a slow {@link TokenConsumer} never hold up the other chats' batch (the tokenizer is safe to share,
 * so the sending thread decodes). Unbounded: an answer is at most a context's worth of events.
 */
final class Answer implements TokenSink {

    /** What the sending thread takes from the queue. */
    sealed interface Event {
        /** One generated token. */
        record Token(int id) implements Event {}

        /** The end: why it ended and the counts. */
        record Done(StopReason reason, GenerationStats stats) implements Event {}

        record Failed(RuntimeException error) implements Event {}
    }

    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();

    @Override
    public void onToken(int id, TokenLogprobs logprobs) { // a Chat never asks for logprobs: null
        events.add(new Event.Token(id));
    }

    @Override
    public void onDone(fs.generate.StopReason reason, GenerationStats stats) {
        events.add(new Event.Done(StopReason.of(reason), stats));
    }

    @Override
    public void onError(RuntimeException e) {
        events.add(new Event.Failed(e));
    }

    /** The next event, waiting for it. */
    Event take() throws InterruptedException {
        return events.take();
    }
}
