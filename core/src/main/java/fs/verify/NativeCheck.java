package fs.verify;

import fs.backend.Buffer;
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

    public NativeCheck(VectorBackend exact, NativeMatmulCheck check) {
        super(exact);
        this.check = check;
    }

    @Override
    public void matmul(Buffer x, Weight w, Buffer out, int rows) {
        delegate.matmul(x, w, out, rows);
        if (check.covers(w)) pending = check.check(x, w, out, rows);
    }

    @Override
    public void after(String op, int layer, Buffer output, long length) {
        if (pending == null) return;
        ops.add(new Op(op, layer, pending));
        pending = null;
    }

    /** The matmuls checked so far, in the order they ran. */
    public List<Op> ops() {
        return List.copyOf(ops);
    }
}
