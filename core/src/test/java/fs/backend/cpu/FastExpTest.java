package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.F;
import static fs.backend.cpu.MatmulKernels.L;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

class FastExpTest {

    @Test
    void agreesWithMathExpWithinTwoUlpsOverItsRange() {
        float worst = 0;
        for (int i = 0; i <= 1_000_000; i++) {
            float x = -87f + 175f * i / 1_000_000;
            double exact = Math.exp(x);
            float ulps = (float) (Math.abs(FastExp.exp(x) - exact) / Math.ulp((float) exact));
            worst = Math.max(worst, ulps);
        }
        assertTrue(worst <= 2f, "worst error " + worst + " ulp");
    }

    @Test
    void clampsOutOfRangeInputsToFiniteResults() {
        assertEquals(FastExp.exp(-87f), FastExp.exp(-1000f));
        assertEquals(FastExp.exp(88f), FastExp.exp(Float.POSITIVE_INFINITY));
        assertTrue(Float.isFinite(FastExp.exp(88f)) && FastExp.exp(-87f) > 0);
    }

    @Test
    void vectorLanesEqualTheScalarBitwise() {
        float[] x = new float[L * 4096];
        for (int i = 0; i < x.length; i++) x[i] = (float) Math.sin(i * 0.37) * 90f;
        float[] y = new float[x.length];
        for (int i = 0; i < x.length; i += L) FastExp.exp(FloatVector.fromArray(F, x, i)).intoArray(y, i);
        for (int i = 0; i < x.length; i++) {
            assertEquals(Float.floatToIntBits(FastExp.exp(x[i])), Float.floatToIntBits(y[i]), "x = " + x[i]);
        }
    }
}
