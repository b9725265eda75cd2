package fs.model;

import fs.backend.Backend;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Which backend runs each part of a model: the embedding ({@code input}), each layer's attention block (its weights
 * and its KV cache) and feed-forward block, and the final norm with the output projection ({@code output}). A part's
 * weights are uploaded to its backend and its ops run there; the hidden state is handed from one backend to the next
 * where consecutive parts are on different ones, once per forward at each such boundary.
 */
public record Placement(Backend input, List<Layer> layers, Backend output) {

    /** Where one layer's two blocks run. */
    public record Layer(Backend attention, Backend feedForward) {
        public Layer {
            Objects.requireNonNull(attention, "attention");
            Objects.requireNonNull(feedForward, "feedForward");
        }
    }

    public Placement {
        Objects.requireNonNull(input, "input");
        Objects.requireNonNull(output, "output");
        layers = List.copyOf(layers);
    }

    /** Every part of a model of {@code layers} layers on {@code backend}. */
    public static Placement whole(Backend backend, int layers) {
        Layer layer = new Layer(backend, backend);
        return new Placement(backend, Collections.nCopies(layers, layer), backend);
    }

    /** The backends the parts run on, each once, in the order the forward first reaches them. */
    public List<Backend> backends() {
        return distinct(parts());
    }

    /** Whether every part runs on one backend. */
    public boolean single() {
        return backends().size() == 1;
    }

    /** The backends the attention blocks run on (each holding those layers' KV cache), each once, in layer order. */
    List<Backend> attentionBackends() {
        return distinct(layers.stream().map(Layer::attention).toList());
    }

    /** How many layers' attention (and KV cache) {@code backend} runs. */
    int attentionLayersOn(Backend backend) {
        return (int) layers.stream().filter(l -> l.attention() == backend).count();
    }

    /** Each part's backend in the order the forward runs them. */
    private List<Backend> parts() {
        List<Backend> parts = new ArrayList<>();
        parts.add(input);
        for (Layer l : layers) {
            parts.add(l.attention());
            parts.add(l.feedForward());
        }
        parts.add(output);
        return parts;
    }

    /** {@code backends} without repeats (by identity), in order. */
    private static List<Backend> distinct(List<Backend> backends) {
        Set<Backend> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        return backends.stream().filter(seen::add).toList();
    }
}
