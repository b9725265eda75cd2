package fs.model;

import fs.backend.Buffer;

/**
 * Sees the output of every op of a forward pass, for {@code fs verify}: {@code op} names it (e.g. "q_proj"),
 * {@code layer} is -1 outside the layers, and {@code length} elements of {@code output} are valid.
 */
@FunctionalInterface
public interface Probe {
    Probe NONE = (op, layer, output, length) -> {};

    void after(String op, int layer, Buffer output, long length);
}
