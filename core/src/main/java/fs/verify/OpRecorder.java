package fs.verify;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.model.Probe;
import java.util.ArrayList;
import java.util.List;

/** A probe that copies every op's output to the host, in the order the forward pass produced them. */
final class OpRecorder implements Probe {
    record Output(String op, int layer, float[] values) {}

    private final List<Output> outputs = new ArrayList<>();

    @Override
    public void after(String op, int layer, Backend backend, Buffer output, long length) {
        float[] values = new float[Math.toIntExact(length)];
        backend.read(output, 0, values);
        outputs.add(new Output(op, layer, values));
    }

    List<Output> outputs() {
        return outputs;
    }
}
