package fs.tensor;

import java.util.List;

/**
 * The weight formats the tests loop over, from the descriptors ({@link DType}) alone, as llama.cpp's test-backend-ops
 * loops over ggml's type table: a format added to DType is in every test that takes one of these sources, with
 * nothing to add there. Each backend reads exactly these (fs.backend.EveryFormatOnEveryBackendTest checks it), so a
 * test over a source covers every format its backend reads. For JUnit:
 * {@code @MethodSource("fs.tensor.FormatSources#quantized")}.
 */
public final class FormatSources {
    private FormatSources() {}

    /** Every format fs reads weights in: the ggml types, float and quantized. */
    public static List<DType> weights() {
        return DType.ggmlTypes();
    }

    /** The float weight formats: F32, F16 and BF16. */
    public static List<DType> floats() {
        return weights().stream().filter(t -> !t.isQuantized()).toList();
    }

    /** The block formats: every quantized ggml type. */
    public static List<DType> quantized() {
        return weights().stream().filter(DType::isQuantized).toList();
    }
}
