package fs.model;

import fs.backend.Backend;
import fs.backend.Weight;

/** SwiGLU: x += down(silu(gate(h)) * up(h)) with h = rmsnorm(x). */
final class DenseFeedForward implements FeedForwardBlock {
    private final Weight norm, gate, up, down;

    DenseFeedForward(Weight norm, Weight gate, Weight up, Weight down) {
        this.norm = norm;
        this.gate = gate;
        this.up = up;
        this.down = down;
    }

    @Override
    public void forward(Backend backend, ModelConfig config, int l, int rows, Activations b, Probe probe) {
        long hiddenLength = (long) rows * config.hiddenSize();
        long ffnLength = (long) rows * gate.rows();
        backend.rmsNorm(b.x, norm, b.xb, rows, config.rmsNormEps());
        probe.after("ffn_norm", l, backend, b.xb, hiddenLength);
        backend.matmul(b.xb, gate, b.gate, rows);
        probe.after("gate_proj", l, backend, b.gate, ffnLength);
        backend.matmul(b.xb, up, b.up, rows);
        probe.after("up_proj", l, backend, b.up, ffnLength);
        backend.siluMul(b.gate, b.up, b.gate, ffnLength);
        probe.after("silu_mul", l, backend, b.gate, ffnLength);
        backend.matmul(b.gate, down, b.xb, rows);
        probe.after("down_proj", l, backend, b.xb, hiddenLength);
        backend.add(b.x, b.xb, hiddenLength);
        probe.after("ffn_residual", l, backend, b.x, hiddenLength);
    }
}
