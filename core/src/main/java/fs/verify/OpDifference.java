package fs.verify;

/**
 * How far one op's output on the backend under test is from the oracle's: max |a−b|, RMS of a−b, and
 * NMSE = Σ(a−b)² / Σb² (llama.cpp test-backend-ops' metric), over {@code length} elements.
 */
public record OpDifference(String pass, String op, int layer, long length, double maxAbs, double rms, double nmse) {

    static OpDifference of(String pass, String op, int layer, float[] tested, float[] oracle) {
        double sumSquaredDiff = 0, sumSquaredOracle = 0, maxAbs = 0;
        for (int i = 0; i < oracle.length; i++) {
            double d = (double) tested[i] - oracle[i];
            sumSquaredDiff += d * d;
            sumSquaredOracle += (double) oracle[i] * oracle[i];
            maxAbs = Math.max(maxAbs, Math.abs(d));
        }
        if (Double.isNaN(sumSquaredDiff)) maxAbs = Double.NaN; // Math.max drops NaN only sometimes: make it visible
        double nmse = sumSquaredOracle == 0 ? (sumSquaredDiff == 0 ? 0 : Double.POSITIVE_INFINITY)
                : sumSquaredDiff / sumSquaredOracle;
        return new OpDifference(pass, op, layer, oracle.length, maxAbs, Math.sqrt(sumSquaredDiff / oracle.length), nmse);
    }

    /** NaN counts as over: a NaN anywhere is a failure, never a pass. */
    public boolean exceeds(double threshold) {
        return !(nmse <= threshold);
    }

    public String where() {
        return pass + " " + (layer < 0 ? op : "layer " + layer + " " + op);
    }
}
