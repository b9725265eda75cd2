package fs.model;

import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * A model architecture fs runs, as one unit: the names it is registered by (config.json's model_type and
 * architectures, GGUF's general.architecture), how it reads what is its own in either config (its feed-forward
 * blocks; the rest of a decoder's hyperparameters is read the same for every architecture), and so which tensors its
 * layers hold ({@link TensorRole}) and which blocks its forward is built from ({@link DecoderModel}).
 *
 * <p>Adding an architecture: a class here and its entry in {@link #ALL}; new tensor roles in {@link TensorRole}, new
 * feed-forward kinds in {@link FeedForward} with their block. Nothing above the model layer names an architecture.
 */
public sealed interface Architecture permits Qwen3, Qwen3Moe {

    /** Every architecture fs runs. */
    List<Architecture> ALL = List.of(new Qwen3(), new Qwen3Moe());

    /** What users call it: "Qwen3", "Qwen3-MoE". */
    String displayName();

    /** config.json's model_type. */
    String modelType();

    /** The class config.json's architectures lists. */
    String huggingFaceClass();

    /** GGUF's general.architecture, also the prefix of the file's hyperparameter keys. */
    String ggufName();

    /** Each layer's feed-forward block, from config.json. */
    List<FeedForward> feedForward(HuggingFaceConfigReader config, int layers);

    /** Each layer's feed-forward block, from the GGUF metadata (keys under {@link #ggufName()}). */
    List<FeedForward> feedForward(GgufConfigReader metadata, int layers);

    static Optional<Architecture> byModelType(String modelType) {
        return ALL.stream().filter(a -> a.modelType().equals(modelType)).findFirst();
    }

    static Optional<Architecture> byGgufName(String name) {
        return ALL.stream().filter(a -> a.ggufName().equals(name)).findFirst();
    }

    /** "'qwen3', 'qwen3moe'": what a name was expected to be, for messages. */
    static String expected(Function<Architecture, String> name) {
        return String.join(", ", ALL.stream().map(a -> "'" + name.apply(a) + "'").toList());
    }
}
