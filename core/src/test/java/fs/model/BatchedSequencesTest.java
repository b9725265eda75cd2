package fs.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import fs.backend.Backend;
import fs.backend.KvCache;
import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Several sequences in one forward compute what each computes alone: prompts of different lengths prefilled in one
 * batch, then greedy decode steps of every sequence at its own position in one batch, one sequence leaving early.
 * Compared with each sequence run alone through a {@link SingleSequence} (logits within the backend's batching
 * tolerance, greedy tokens identical). A backend's test extends this class and says how to create the backend.
 */
public abstract class BatchedSequencesTest {
    private static final int STEPS = 6;
    /** Prompt lengths, and how many decode steps each sequence takes before it leaves (one leaves early). */
    private static final int[] PROMPT_LENGTHS = {5, 11, 1, 17};
    private static final int[] STEPS_TAKEN = {STEPS, STEPS, 2, STEPS};

    /** A fresh backend; the test closes it. */
    protected abstract Backend createBackend();

    /**
     * How far a logit of a batched forward may be from the one-sequence run's: one row and many rows may sum in
     * different orders (see ModelGoldenTest's batching tolerance).
     */
    protected abstract double batchingTolerance(ModelConfig config, float logit);

    /** What one sequence computed: the logits before each of its chosen tokens, and the tokens. */
    private record Run(float[][] logits, int[] tokens) {}

    @Test
    void severalSequencesInOneBatchComputeWhatEachComputesAlone() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        int[][] prompts = new int[PROMPT_LENGTHS.length][];
        for (int s = 0; s < prompts.length; s++) {
            prompts[s] = Arrays.copyOfRange(golden.promptIds(), 3 * s, 3 * s + PROMPT_LENGTHS[s]);
        }
        Run[] alone = new Run[prompts.length];
        try (TestModel test = TestModel.open(golden.modelDir(), createBackend(), 64, 64, 1)) {
            for (int s = 0; s < prompts.length; s++) alone[s] = alone(test.model(), prompts[s], STEPS_TAKEN[s]);
        }
        try (TestModel test = TestModel.open(golden.modelDir(), createBackend(), 64, 64, 1)) {
            Run[] batched = batched(test.model(), prompts);
            ModelConfig config = test.model().config();
            for (int s = 0; s < prompts.length; s++) {
                assertArrayEquals(alone[s].tokens(), batched[s].tokens(), "greedy tokens of sequence " + s);
                for (int step = 0; step < STEPS_TAKEN[s]; step++) {
                    float[] expected = alone[s].logits()[step], actual = batched[s].logits()[step];
                    for (int id = 0; id < expected.length; id++) {
                        if (Math.abs(expected[id] - actual[id]) <= batchingTolerance(config, expected[id])) continue;
                        assertEquals(expected[id], actual[id], batchingTolerance(config, expected[id]),
                                "sequence " + s + " step " + step + " logit " + id);
                    }
                }
            }
        }
    }

    /** One sequence on its own cache: its prompt in one forward, then one forward per token. */
    private static Run alone(DecoderModel model, int[] prompt, int steps) {
        SingleSequence sequence = new SingleSequence(model, new SingleSequence.Shape(64, 64, 1));
        float[][] logits = new float[steps][model.config().vocabSize()];
        int[] tokens = new int[steps];
        sequence.forward(prompt, 0, Probe.NONE);
        for (int step = 0; step < steps; step++) {
            sequence.readLogits(0, logits[step]);
            tokens[step] = sequence.argmax(0);
            if (step + 1 < steps) sequence.forward(new int[] {tokens[step]}, prompt.length + step, Probe.NONE);
        }
        return new Run(logits, tokens);
    }

    /**
     * Every sequence in one cache: all prompts in one forward (a run of rows per sequence, logits of each one's last
     * row), then each step one forward of the next token of every sequence still decoding, in reverse order so that
     * rows do not follow sequence order.
     */
    private static Run[] batched(DecoderModel model, int[][] prompts) {
        int n = prompts.length;
        KvCache cache = model.allocateCache(n, 64);
        ForwardBuffers buffers = model.allocateBuffers(64, n);
        float[][][] logits = new float[n][STEPS][model.config().vocabSize()];
        int[][] tokens = new int[n][STEPS];
        Batch.Builder prefill = new Batch.Builder(64);
        int[] logitIndex = new int[n];
        for (int s = 0; s < n; s++) {
            for (int p = 0; p < prompts[s].length; p++) {
                int index = prefill.add(prompts[s][p], p, s, p == prompts[s].length - 1);
                if (index >= 0) logitIndex[s] = index;
            }
        }
        model.forward(prefill.build(), cache, buffers, Probe.NONE);
        for (int step = 0; ; step++) {
            Batch.Builder decode = new Batch.Builder(n);
            for (int s = n - 1; s >= 0; s--) {
                if (step >= STEPS_TAKEN[s]) continue;
                buffers.readLogits(logitIndex[s], logits[s][step]);
                tokens[s][step] = buffers.argmax(logitIndex[s]);
            }
            for (int s = n - 1; s >= 0; s--) {
                if (step + 1 >= STEPS_TAKEN[s]) continue;
                logitIndex[s] = decode.add(tokens[s][step], prompts[s].length + step, s, true);
            }
            if (decode.rows() == 0) break;
            model.forward(decode.build(), cache, buffers, Probe.NONE);
        }
        Run[] runs = new Run[n];
        for (int s = 0; s < n; s++) {
            runs[s] = new Run(Arrays.copyOf(logits[s], STEPS_TAKEN[s]), Arrays.copyOf(tokens[s], STEPS_TAKEN[s]));
        }
        return runs;
    }
}
