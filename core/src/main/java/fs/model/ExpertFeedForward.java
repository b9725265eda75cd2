package fs.model;

import fs.backend.Backend;
import fs.backend.ExpertRouting;
import fs.backend.Weight;
import java.util.List;

/**
 * Hugging Face's Qwen3MoeSparseMoeBlock: with h = rmsnorm(x), the router's logits h · routerᵀ choose each row's
 * experts and weights ({@link Router}); every chosen expert e runs its SwiGLU down_e(silu(gate_e(h)) * up_e(h)), and
 * x += Σ weight_e · expert_e(h), summed in ascending expert order. The expert matmuls run a slot per (row, chosen
 * expert), grouped by expert on the backend ({@link Backend#matmulExperts}).
 */
final class ExpertFeedForward implements FeedForwardBlock {
    private final FeedForward.Experts shape;
    private final Weight norm, router;
    private final List<Weight> gate, up, down;

    ExpertFeedForward(FeedForward.Experts shape, Weight norm, Weight router, List<Weight> gate, List<Weight> up,
            List<Weight> down) {
        this.shape = shape;
        this.norm = norm;
        this.router = router;
        this.gate = List.copyOf(gate);
        this.up = List.copyOf(up);
        this.down = List.copyOf(down);
    }

    @Override
    public void forward(Backend backend, ModelConfig config, int l, int rows, Activations b, Probe probe) {
        long hiddenLength = (long) rows * config.hiddenSize();
        long slotLength = (long) rows * shape.used() * shape.width();
        backend.rmsNorm(b.x, norm, b.xb, rows, config.rmsNormEps());
        probe.after("ffn_norm", l, backend, b.xb, hiddenLength);
        backend.matmul(b.xb, router, b.routerLogits, rows);
        probe.after("router", l, backend, b.routerLogits, (long) rows * shape.count());
        ExpertRouting routing = Router.route(b.readRouterLogits(rows, shape.count()), rows, shape);
        probe.routed(l, routing);
        backend.matmulExperts(b.xb, false, gate, routing, b.gate);
        probe.after("expert_gate", l, backend, b.gate, slotLength);
        backend.matmulExperts(b.xb, false, up, routing, b.up);
        probe.after("expert_up", l, backend, b.up, slotLength);
        backend.siluMul(b.gate, b.up, b.gate, slotLength);
        probe.after("expert_silu_mul", l, backend, b.gate, slotLength);
        backend.matmulExperts(b.gate, true, down, routing, b.expertOut);
        probe.after("expert_down", l, backend, b.expertOut, (long) routing.slots() * config.hiddenSize());
        backend.sumExperts(b.expertOut, routing, b.xb, config.hiddenSize());
        probe.after("expert_sum", l, backend, b.xb, hiddenLength);
        backend.add(b.x, b.xb, hiddenLength);
        probe.after("ffn_residual", l, backend, b.x, hiddenLength);
    }
}
