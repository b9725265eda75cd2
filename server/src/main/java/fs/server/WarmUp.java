package fs.server;

import fs.embed.Embeddings;
import fs.embed.Reranker;
import fs.generate.GenerationStats;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.generate.TokenLogprobs;
import fs.generate.TokenSink;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs the engine before /health says ok, so that the JIT has compiled its kernels before the first client waits for
 * them (on the CPU a cold first request spends seconds compiling): a short prompt alone, for the one-row paths, then
 * the same in every slot at once, for the batched prefill and decode (without it the first batched requests after a
 * start were 15 times slower than the next ones). A model served to embed or rerank runs one short input instead.
 */
public final class WarmUp {
    /** Tokens each warm-up request generates: enough decode steps for the batched kernels to be compiled. */
    static final int TOKENS = 8;

    private WarmUp() {}

    public static void run(ServedModel served) throws InterruptedException {
        switch (served.task()) {
            case CHAT -> generate(served);
            // one short input through the batched forward, as a request's would run
            case EMBEDDING -> served.retrieval().embed(served.retrieval().fitted(
                    List.of(served.retrieval().tokens("warm up")), false), Embeddings.Options.DEFAULT);
            case RERANK -> served.retrieval().scores(served.retrieval().prompts(Reranker.DEFAULT_INSTRUCTION,
                    "warm up", List.of("warm up"), true));
        }
    }

    private static void generate(ServedModel served) throws InterruptedException {
        int[] prompt = served.tokenizer().encode("<|im_start|>user\n");
        if (prompt.length < 2) return;
        together(served.engine(), prompt, 1);
        int slots = served.engine().load().slots();
        if (slots > 1) together(served.engine(), prompt, slots);
    }

    /** Submits {@code count} requests before waiting for any, so the engine runs them as one batch. */
    private static void together(CompletionEngine engine, int[] prompt, int count) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(count);
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        TokenSink sink = new TokenSink() {
            @Override
            public void onToken(int id, TokenLogprobs logprobs) {}

            @Override
            public void onDone(StopReason reason, GenerationStats stats) {
                done.countDown();
            }

            @Override
            public void onError(RuntimeException e) {
                failure.compareAndSet(null, e);
                done.countDown();
            }
        };
        for (int i = 0; i < count; i++) engine.submit(prompt, SamplingParams.greedy(), TOKENS, -1, null, sink);
        done.await();
        if (failure.get() != null) throw failure.get();
    }
}
