package fs.verify;

import fs.model.SingleSequence;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs the same tokens through two models that differ only in their backend, and compares every op of every layer
 * and the logits. Two passes, because backends use different kernels for them: "prefill" runs all tokens as one
 * batch, "decode" then runs the last token again alone at its own position (re-writing the same cache entries).
 */
public final class CrossCheck {

    /**
     * Everything verify reports. {@code top1Agreement[i]} says whether both backends' logits have the same argmax at
     * prefill position i; the decode pass's agreement is the last entry.
     */
    public record Report(List<OpDifference> differences, boolean[] top1Agreement, int[] testedTop1, int[] oracleTop1,
                         double threshold) {
        /** The op with the largest NMSE (a NaN beats everything). */
        public OpDifference worst() {
            OpDifference worst = differences.getFirst();
            for (OpDifference d : differences) {
                if (Double.isNaN(worst.nmse())) break;
                if (Double.isNaN(d.nmse()) || d.nmse() > worst.nmse()) worst = d;
            }
            return worst;
        }

        /** The first op, in execution order, whose NMSE is over the threshold; null when none is. */
        public OpDifference firstOverThreshold() {
            for (OpDifference d : differences) if (d.exceeds(threshold)) return d;
            return null;
        }

        public int top1Agreements() {
            int n = 0;
            for (boolean agree : top1Agreement) if (agree) n++;
            return n;
        }

        public boolean agree() {
            return firstOverThreshold() == null && top1Agreements() == top1Agreement.length;
        }
    }

    private CrossCheck() {}

    /**
     * {@code tested} and {@code oracle} must be built from the same weights with room for {@code tokens.length}
     * positions, batches of that many rows, and logits for every row.
     */
    public static Report run(SingleSequence tested, SingleSequence oracle, int[] tokens, double threshold) {
        List<OpDifference> differences = new ArrayList<>();
        int n = tokens.length;
        boolean[] agreement = new boolean[n + 1];
        int[] testedTop1 = new int[n + 1];
        int[] oracleTop1 = new int[n + 1];

        compare("prefill", tested, oracle, tokens, 0, differences);
        for (int row = 0; row < n; row++) {
            testedTop1[row] = tested.argmax(row);
            oracleTop1[row] = oracle.argmax(row);
        }
        compare("decode", tested, oracle, new int[] {tokens[n - 1]}, n - 1, differences);
        testedTop1[n] = tested.argmax(0);
        oracleTop1[n] = oracle.argmax(0);
        for (int i = 0; i <= n; i++) agreement[i] = testedTop1[i] == oracleTop1[i];
        return new Report(List.copyOf(differences), agreement, testedTop1, oracleTop1, threshold);
    }

    private static void compare(String pass, SingleSequence tested, SingleSequence oracle, int[] tokens, int startPos,
                                List<OpDifference> into) {
        OpRecorder testedOps = new OpRecorder();
        OpRecorder oracleOps = new OpRecorder();
        tested.forward(tokens, startPos, testedOps);
        oracle.forward(tokens, startPos, oracleOps);
        List<OpRecorder.Output> a = testedOps.outputs();
        List<OpRecorder.Output> b = oracleOps.outputs();
        if (a.size() != b.size()) {
            throw new IllegalStateException("the two forward passes probed " + a.size() + " and " + b.size() + " ops");
        }
        for (int i = 0; i < a.size(); i++) {
            OpRecorder.Output x = a.get(i), y = b.get(i);
            if (!x.op().equals(y.op()) || x.layer() != y.layer()) {
                throw new IllegalStateException("op " + i + " differs: " + x.op() + " vs " + y.op());
            }
            into.add(OpDifference.of(pass, x.op(), x.layer(), x.values(), y.values()));
        }
    }
}
