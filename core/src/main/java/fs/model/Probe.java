package fs.model;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.ExpertRouting;

/**
 * Sees the output of every op of a forward pass, for {@code fs verify}: {@code op} names it (e.g. "q_proj"),
 * {@code layer} is -1 outside the layers, and {@code length} elements of {@code output}, a buffer of {@code backend}
 * (the backend that ran the op: a split model's ops run on more than one), are valid.
 */
@FunctionalInterface
public interface Probe {
    Probe NONE = (op, layer, backend, output, length) -> {};

    void after(String op, int layer, Backend backend, Buffer output, long length);

    /**
     * Layer {@code layer}'s mixture of experts chose {@code routing} for the batch's rows: called after "router" and
     * before the experts run, so that what follows ("expert_gate" … "expert_down", a row per slot in slot order) can
     * be told apart by expert. Nothing by default.
     */
    default void routed(int layer, ExpertRouting routing) {}
}
