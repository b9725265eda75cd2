package fs.verify;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.ExpertRouting;
import fs.backend.ForwardingBackend;
import fs.backend.Weight;
import fs.backend.cpu.NativeMatmulCheck;
import fs.backend.cpu.VectorBackend;
import fs.model.Probe;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code fs verify --native}: the exact Vector API path runs the forward pass, and each of its matmuls of a format
 * the native kernels have is run again on them from the same input and compared ({@link NativeMatmulCheck}: within
 * the bound of what rounding that input to int8 moves). Comparing op by op on the exact path's own inputs, not two
 * whole passes, keeps each op's threshold its own: in two passes every op would also carry the rounding of all the
 * ops before it. As the model's probe it names each result by the op the model reports after the matmul.
 */
public final class NativeCheck extends ForwardingBackend implements Probe {
    /** One checked matmul: the model's name for it, its layer (−1 outside the layers) and the comparison. */
    public record Op(String op, int layer, NativeMatmulCheck.Result result) {
        public String where() {
            return layer < 0 ? op : "layer " + layer + " " + op;
        }
    }

    private final NativeMatmulCheck check;
    private final List<Op> ops = new ArrayList<>();
    private NativeMatmulCheck.Result pending;
    /** Gathered inputs and outputs of one expert's slots, grown as needed. */
    private final Buffer[] scratch = new Buffer[2];

    public NativeCheck(VectorBackend exact, NativeMatmulCheck check) {
        super(exact);
        this.check = check;
    }

    @Override
    public void matmul(Buffer x, Weight w, Buffer out, int rows) {
        delegate.matmul(x, w, out, rows);
        if (check.covers(w)) pending = check.check(x, w, out, rows);
    }

    /**
     * Each chosen expert's matmul is checked on its own slots' rows, gathered from the exact path's input and output
     * (the expert op's grouping); the op's result is its worst expert's.
     */
    @Override
    public void matmulExperts(Buffer x, boolean xPerSlot, List<Weight> experts, ExpertRouting routing, Buffer out) {
        delegate.matmulExperts(x, xPerSlot, experts, routing, out);
        if (!check.covers(experts.getFirst())) return;
        long in = experts.getFirst().columns(), width = experts.getFirst().rows();
        for (int e = 0; e < routing.expertCount(); e++) {
            int start = routing.groupStart(e), n = routing.groupEnd(e) - start;
            if (n == 0) continue;
            Buffer gathered = scratch(0, n * in), products = scratch(1, n * width);
            for (int i = 0; i < n; i++) {
                int slot = routing.groupedSlot(start + i);
                long row = xPerSlot ? slot : slot / routing.used();
                delegate.copy(x, row * in, gathered, i * in, in);
                delegate.copy(out, slot * width, products, i * width, width);
            }
            NativeMatmulCheck.Result result = check.check(gathered, experts.get(e), products, n);
            pending = pending == null ? result : worse(pending, result);
        }
    }

    private static NativeMatmulCheck.Result worse(NativeMatmulCheck.Result a, NativeMatmulCheck.Result b) {
        return new NativeMatmulCheck.Result(a.outputs() + b.outputs(), Math.max(a.maxAbs(), b.maxAbs()),
                Math.max(a.worstRatio(), b.worstRatio()), Math.max(a.nmse(), b.nmse()));
    }

    /** Scratch buffer {@code which} of exactly {@code length} floats' use (a check reads a buffer from its start). */
    private Buffer scratch(int which, long length) {
        if (scratch[which] == null || scratch[which].length() < length) scratch[which] = delegate.allocate(length);
        return scratch[which];
    }

    @Override
    public void after(String op, int layer, Backend backend, Buffer output, long length) {
        if (pending == null) return;
        ops.add(new Op(op, layer, pending));
        pending = null;
    }

    /** The matmuls checked so far, in the order they ran. */
    public List<Op> ops() {
        return List.copyOf(ops);
    }
}
