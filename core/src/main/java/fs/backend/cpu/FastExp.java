package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.F;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * e^x in float32 from adds, multiplies and FMAs only, as a vector and as a scalar that performs the very same
 * operations, so a lane and a lone element agree bitwise (and interpreted and compiled code agree: the Vector API's
 * own EXP may be an intrinsic that differs from its Java fallback). Within 2 ulp of Math.exp on [-87, 88]; inputs are
 * clamped to that range (below it the result is a tiny normal number rather than 0, above it 1.6e38 rather than ∞).
 */
final class FastExp {
    private static final float MIN = -87f, MAX = 88f;
    private static final float LOG2E = 1.44269504f;
    /** 1.5 · 2^23: adding and subtracting it rounds a float of magnitude below 2^22 to an integer. */
    private static final float ROUND = 12582912f;
    /** ln 2 split so that n · LN2_HI is exact for the n that occur. */
    private static final float LN2_HI = 0.693145752f, LN2_LO = 1.42860677e-6f;
    /** Taylor coefficients 1/k! for k = 7 down to 2. */
    private static final float C7 = 1.98412698e-4f, C6 = 1.38888889e-3f, C5 = 8.33333333e-3f, C4 = 4.16666667e-2f,
            C3 = 1.66666667e-1f, C2 = 0.5f;

    private FastExp() {}

    static FloatVector exp(FloatVector x) {
        x = x.max(MIN).min(MAX);
        FloatVector n = x.mul(LOG2E).add(ROUND).sub(ROUND);
        FloatVector r = n.fma(FloatVector.broadcast(F, -LN2_HI), x);
        r = n.fma(FloatVector.broadcast(F, -LN2_LO), r);
        FloatVector p = r.fma(C7, C6);
        p = p.fma(r, FloatVector.broadcast(F, C5));
        p = p.fma(r, FloatVector.broadcast(F, C4));
        p = p.fma(r, FloatVector.broadcast(F, C3));
        p = p.fma(r, FloatVector.broadcast(F, C2));
        p = p.fma(r, FloatVector.broadcast(F, 1f));
        p = p.fma(r, FloatVector.broadcast(F, 1f));
        FloatVector twoToN = n.convert(VectorOperators.F2I, 0).reinterpretAsInts()
                .add(127).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats();
        return p.mul(twoToN);
    }

    static float exp(float x) {
        x = Math.min(Math.max(x, MIN), MAX);
        float n = x * LOG2E + ROUND - ROUND;
        float r = Math.fma(n, -LN2_HI, x);
        r = Math.fma(n, -LN2_LO, r);
        float p = Math.fma(r, C7, C6);
        p = Math.fma(p, r, C5);
        p = Math.fma(p, r, C4);
        p = Math.fma(p, r, C3);
        p = Math.fma(p, r, C2);
        p = Math.fma(p, r, 1f);
        p = Math.fma(p, r, 1f);
        return p * Float.intBitsToFloat(((int) n + 127) << 23);
    }
}
