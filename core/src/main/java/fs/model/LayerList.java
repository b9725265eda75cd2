package fs.model;

import java.util.AbstractList;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * An immutable list of one value per layer, computed from the layer's index when asked: a config may claim 10^9
 * layers (the weights then say it is wrong), and what is said of each layer must not cost memory per layer first.
 * {@code perLayer} must be pure.
 */
final class LayerList<T> extends AbstractList<T> {
    private final int layers;
    private final IntFunction<T> perLayer;

    LayerList(int layers, IntFunction<T> perLayer) {
        if (layers < 0) throw new IllegalArgumentException("negative layer count " + layers);
        this.layers = layers;
        this.perLayer = perLayer;
    }

    @Override
    public T get(int layer) {
        Objects.checkIndex(layer, layers);
        return perLayer.apply(layer);
    }

    @Override
    public int size() {
        return layers;
    }
}
