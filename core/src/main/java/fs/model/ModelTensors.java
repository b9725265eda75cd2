package fs.model;

import fs.tensor.Tensor;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Every tensor a model source stores, looked up by name: all that weight binding reads. */
public final class ModelTensors {
    private final Path source;
    private final TensorNaming names;
    private final List<Tensor> tensors;
    private final Map<String, Tensor> byName;

    /**
     * @param source  the directory or file, for messages
     * @param tensors in the order the source stores them
     */
    public ModelTensors(Path source, TensorNaming names, List<Tensor> tensors) {
        this.source = source;
        this.names = names;
        this.tensors = List.copyOf(tensors);
        Map<String, Tensor> byName = new LinkedHashMap<>();
        for (Tensor tensor : tensors) byName.put(tensor.name(), tensor);
        this.byName = Collections.unmodifiableMap(byName);
    }

    public Path source() {
        return source;
    }

    public TensorNaming names() {
        return names;
    }

    /** In stored order. */
    public List<Tensor> tensors() {
        return tensors;
    }

    public Optional<Tensor> find(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** Every stored name, in stored order. */
    List<String> storedNames() {
        return List.copyOf(byName.keySet());
    }
}
