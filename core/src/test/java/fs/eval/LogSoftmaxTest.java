package fs.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class LogSoftmaxTest {

    @Test
    void logSumExpOfEqualLogitsIsTheirValuePlusTheLogOfTheirCount() {
        assertEquals(Math.log(4), LogSoftmax.logSumExp(new float[] {0, 0, 0, 0}), 1e-15);
        assertEquals(7 + Math.log(3), LogSoftmax.logSumExp(new float[] {7, 7, 7}), 1e-14);
    }

    @Test
    void largeLogitsDoNotOverflow() {
        assertEquals(1000 + Math.log(2), LogSoftmax.logSumExp(new float[] {1000, 1000}), 1e-12);
        assertEquals(-1000 + Math.log(2), LogSoftmax.logSumExp(new float[] {-1000, -1000}), 1e-12);
    }

    @Test
    void negativeLogLikelihoodIsMinusTheLogOfTheTokensProbability() {
        float[] logits = {0, (float) Math.log(3)}; // probabilities 1/4 and 3/4
        assertEquals(Math.log(4), LogSoftmax.negativeLogLikelihood(logits, 0), 1e-7);
        assertEquals(-Math.log(0.75), LogSoftmax.negativeLogLikelihood(logits, 1), 1e-7);
    }

    @Test
    void argmaxTakesTheLowestIndexOnTies() {
        assertEquals(1, LogSoftmax.argmax(new float[] {0, 5, 5, 1}));
        assertEquals(0, LogSoftmax.argmax(new float[] {2, 2}));
        assertEquals(3, LogSoftmax.argmax(new float[] {-3, -2, -1, 0}));
    }
}
