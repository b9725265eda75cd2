package fs.model;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.backend.KvCache;
import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.backend.cpu.VectorBackend;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * 8,192 positions of models/tiny-tied-yarn (YaRN, factor 4 over 4,096 original positions) with the KV cache in each
 * type, against the same forwards with the float32 cache: at the last row of each batch of 512, from the first to
 * position 8,191, the logits stay within the type's rounding of the float32 cache's, and the top token is the same.
 *
 * <p>The bound: storing a key or value as the type moves it by at most ε of itself (f16 2⁻¹¹, bf16 2⁻⁸; see
 * fs.backend's KvCacheRounding), and through two layers and the tied head that moves a logit by a few ε of the
 * largest logit; {@link #SLACK} ε is stated here, and the f32 cache must meet zero. q8_0 needs whole blocks of 32 in
 * a head, which tiny-tied-yarn's 16 are not: the cache is refused by one line.
 */
class LongContextCacheTypesTest {
    private static final int POSITIONS = 8192, BATCH = 512;
    /** How many ε of the largest |logit| a logit may move. */
    private static final double SLACK = 4;

    private static TestModel test;
    private static int[] tokens;
    private static float[][] float32Logits;

    @BeforeAll
    static void runTheFloat32Cache() {
        test = TestModel.open(Path.of("../models/tiny-tied-yarn"), new VectorBackend(2), 1, 1, 1);
        Random random = new Random(27);
        tokens = new int[POSITIONS];
        for (int i = 0; i < POSITIONS; i++) tokens[i] = random.nextInt(test.model().config().vocabSize());
        float32Logits = lastRowLogits(KvCacheTypes.F32);
    }

    @AfterAll
    static void close() {
        test.close();
    }

    @Test
    void f16AndBf16StayWithinTheirRoundingAt8192Positions() {
        for (KvCacheType type : new KvCacheType[] {KvCacheType.F16, KvCacheType.BF16}) {
            double epsilon = type == KvCacheType.F16 ? 0x1p-11 : 0x1p-8;
            float[][] logits = lastRowLogits(new KvCacheTypes(type, type));
            for (int b = 0; b < logits.length; b++) {
                double largest = 0, miss = 0;
                for (int i = 0; i < logits[b].length; i++) {
                    largest = Math.max(largest, Math.abs(float32Logits[b][i]));
                    miss = Math.max(miss, Math.abs(logits[b][i] - float32Logits[b][i]));
                }
                int position = (b + 1) * BATCH - 1;
                assertTrue(miss <= SLACK * epsilon * largest,
                        type + " at position " + position + ": a logit moved " + miss + ", largest " + largest);
                assertTrue(argmax(logits[b]) == argmax(float32Logits[b]), type + " at position " + position);
            }
        }
    }

    @Test
    void q8_0IsRefusedForHeadsOf16() {
        FsException e = assertThrows(FsException.class, () -> test.model().allocateCache(1, POSITIONS,
                new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.Q8_0)));
        assertTrue(e.getMessage().contains("multiple of 32"), e.getMessage());
    }

    /** Every position in batches of 512; the logits of each batch's last row. */
    private static float[][] lastRowLogits(KvCacheTypes types) {
        DecoderModel model = test.model();
        KvCache cache = model.allocateCache(1, POSITIONS, types);
        ForwardBuffers buffers = model.allocateBuffers(BATCH, 1);
        float[][] logits = new float[POSITIONS / BATCH][model.config().vocabSize()];
        for (int b = 0; b < logits.length; b++) {
            int[] batch = java.util.Arrays.copyOfRange(tokens, b * BATCH, (b + 1) * BATCH);
            model.forward(Batch.run(0, batch, b * BATCH, 1), cache, buffers, Probe.NONE);
            buffers.readLogits(0, logits[b]);
        }
        return logits;
    }

    private static int argmax(float[] x) {
        int best = 0;
        for (int i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
        return best;
    }
}
