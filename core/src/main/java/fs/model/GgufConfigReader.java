package fs.model;

import fs.FsException;
import fs.Quoted;
import fs.gguf.GgufFile;
import fs.gguf.GgufMetadata;
import fs.gguf.GgufTensor;
import fs.gguf.GgufValueType;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

/**
 * Reads a {@link ModelConfig} from the metadata of a GGUF file, the keys llama.cpp writes under the name of its
 * general.architecture ({@link Architecture#ggufName}), which reads its own keys through this reader; every missing
 * or mistyped key is one FsException naming the file and the key. head_dim comes from
 * attention.key_length, not hidden / heads (Qwen3-0.6B: 1024 / 16 = 64, but its heads are 128 wide). A file with no
 * output.weight ties the output projection to the embedding. The vocabulary size is the embedding's row count.
 */
public final class GgufConfigReader {
    private static final String EMBEDDING = "token_embd.weight";

    private final GgufFile file;
    private final GgufMetadata metadata;
    private Architecture architecture;

    private GgufConfigReader(GgufFile file) {
        this.file = file;
        this.metadata = file.metadata();
    }

    public static ModelConfig read(GgufFile file) {
        return new GgufConfigReader(file).config();
    }

    private ModelConfig config() {
        String name = metadata.string("general.architecture");
        architecture = Architecture.byGgufName(name).orElseThrow(() -> metadata.error("general.architecture", "is "
                + Quoted.quote(name) + ", expected one of " + Architecture.expected(Architecture::ggufName)));
        checkRopeScaling();
        int hidden = positive("embedding_length");
        int heads = positive("attention.head_count");
        int kvHeads = metadata.has(key("attention.head_count_kv")) ? positive("attention.head_count_kv") : heads;
        int headDim = positive("attention.key_length");
        if (metadata.has(key("attention.value_length")) && positive("attention.value_length") != headDim) {
            throw metadata.error(key("attention.value_length"), "(" + positive("attention.value_length")
                    + ") differs from " + key("attention.key_length") + " (" + headDim + "); Qwen3 heads are square");
        }
        int layers = positive("block_count");
        List<FeedForward> feedForward = architecture.feedForward(this, layers);
        int vocab = vocabSize(hidden);
        float eps = positiveFloat("attention.layer_norm_rms_epsilon");
        float theta = positiveFloat("rope.freq_base");
        int context = positive("context_length");
        boolean tied = file.tensor("output.weight").isEmpty();
        int bos = metadata.nonNegativeInt("tokenizer.ggml.bos_token_id");
        int eos = metadata.nonNegativeInt("tokenizer.ggml.eos_token_id");
        try {
            return new ModelConfig(architecture, hidden, layers, heads, kvHeads, headDim, feedForward, vocab, eps, theta,
                    new RopeScaling.Plain(), context, tied, bos, List.of(eos), "gguf");
        } catch (IllegalArgumentException e) {
            throw new FsException(file.path() + ": " + e.getMessage()); // what ModelConfig checks across fields
        }
    }

    /** The engine implements plain RoPE; a scaled variant would silently produce wrong logits at long context. */
    private void checkRopeScaling() {
        String typeKey = key("rope.scaling.type");
        if (!metadata.has(typeKey)) return;
        String type = metadata.string(typeKey);
        if (!type.equals("none")) {
            throw metadata.error(typeKey, "is " + Quoted.quote(type) + ": only plain RoPE is supported");
        }
    }

    /** The embedding's rows; the token list, when present, must not name more tokens than it has rows. */
    private int vocabSize(int hidden) {
        GgufTensor embedding = file.tensor(EMBEDDING).orElseThrow(
                () -> new FsException(file.path() + ": tensor '" + EMBEDDING + "' is missing"));
        long[] shape = embedding.shape();
        if (shape.length != 2 || shape[1] != hidden || shape[0] < 1 || shape[0] > Integer.MAX_VALUE) {
            throw new FsException(file.path() + ": tensor '" + EMBEDDING + "' has shape "
                    + Arrays.toString(shape) + ", expected [vocabulary, " + hidden + "]");
        }
        String tokensKey = "tokenizer.ggml.tokens";
        if (metadata.has(tokensKey)) {
            int tokens = metadata.array(tokensKey, GgufValueType.STRING).length();
            if (tokens > shape[0]) {
                throw metadata.error(tokensKey, "lists " + tokens + " tokens but " + EMBEDDING + " has only "
                        + shape[0] + " rows");
            }
        }
        return (int) shape[0];
    }

    /** What the architecture builds from this file's keys, its IllegalArgumentException as this file's error. */
    <T> T checked(Supplier<T> build) {
        try {
            return build.get();
        } catch (IllegalArgumentException e) {
            throw new FsException(file.path() + ": " + e.getMessage());
        }
    }

    /** The architecture's key {@code name} (under its prefix), a positive integer. */
    int positive(String name) {
        int value = metadata.nonNegativeInt(key(name));
        if (value == 0) throw metadata.error(key(name), "must be positive, found 0");
        return value;
    }

    private float positiveFloat(String name) {
        float value = (float) metadata.number(key(name));
        if (!(value > 0) || Float.isInfinite(value)) {
            throw metadata.error(key(name), "must be a positive number (as a float), found " + value);
        }
        return value;
    }

    private String key(String name) {
        return architecture.ggufName() + "." + name;
    }
}
