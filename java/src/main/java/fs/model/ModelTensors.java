package fs.model;

import fs.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every tensor a model source stores, looked up by name: all that weight binding reads. {@link #unsupported()} names
 * the tensors stored in a format fs cannot compute with, each with its format's name (a GGUF's Q8_0, say), so that
 * binding refuses each one by name rather than calling it missing.
 */
public final class ModelTensors {
    private final Path source;
    private final Qwen3TensorNames names;
    private final List<Tensor> tensors;
    private final Map<String, Tensor> byName;
    private final Map<String, String> unsupported;

    /**
     * @param source      the directory or file, for messages
     * @param tensors     in the order the source stores them
     * @param unsupported tensor name to the name of its format, in stored order
     */
    public ModelTensors(Path source, Qwen3TensorNames names, List<Tensor> tensors, Map<String, String> unsupported) {
        this.source = source;
        this.names = names;
        this.tensors = List.copyOf(tensors);
        Map<String, Tensor> byName = new LinkedHashMap<>();
        for (Tensor tensor : tensors) byName.put(tensor.name(), tensor);
        this.byName = Collections.unmodifiableMap(byName);
        this.unsupported = Collections.unmodifiableMap(new LinkedHashMap<>(unsupported));
    }

    public Path source() {
        return source;
    }

    public Qwen3TensorNames names() {
        return names;
    }

    /** The tensors fs can compute with, in stored order. */
    public List<Tensor> tensors() {
        return tensors;
    }

    public Optional<Tensor> find(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    public Map<String, String> unsupported() {
        return unsupported;
    }

    /** Every stored name: the usable tensors', then the unsupported ones'. */
    List<String> storedNames() {
        List<String> stored = new ArrayList<>(byName.keySet());
        stored.addAll(unsupported.keySet());
        return stored;
    }
}
