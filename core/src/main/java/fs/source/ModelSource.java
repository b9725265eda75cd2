package fs.source;

import fs.chat.ChatTemplate;
import fs.model.GenerationConfig;
import fs.model.ModelConfig;
import fs.model.ModelTensors;
import fs.model.Pooling;
import fs.tokenizer.Tokenizer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.stream.IntStream;

/**
 * Where a model comes from: a Hugging Face directory or a single GGUF file. Its config, tensors, tokenizer and chat
 * template come from whichever it is. The tensors stay mapped until {@link #close()}.
 */
public sealed interface ModelSource extends AutoCloseable permits HuggingFaceSource, GgufSource {

    /**
     * Opens a directory as a Hugging Face model and anything else as a GGUF file; config and tensors are read and
     * checked now, the tokenizer and chat template when asked for. Every problem is one FsException naming the file.
     */
    static ModelSource open(Path path) {
        return Files.isDirectory(path) ? HuggingFaceSource.open(path) : GgufSource.open(path);
    }

    /** Only the tokenizer of the model at {@code path}, for commands that run no model (the weights are not read). */
    static Tokenizer readTokenizer(Path path) {
        if (Files.isDirectory(path)) return Tokenizer.load(path);
        return GgufSource.readTokenizer(path);
    }

    /** The directory or file, as given. */
    Path path();

    ModelConfig config();

    /** Sampling defaults and extra end-of-sequence ids. */
    GenerationConfig generationConfig();

    ModelTensors tensors();

    /** The ids that end generation: config.json's eos ids and generation_config.json's. */
    default int[] stopIds() {
        return IntStream.concat(
                        config().eosTokenIds().stream().mapToInt(Integer::intValue),
                        generationConfig().eosTokenIds().stream().mapToInt(Integer::intValue))
                .distinct()
                .toArray();
    }

    Tokenizer tokenizer();

    /** How the model pools hidden states into an embedding, as its files say ({@link Pooling#NONE}: a causal LM). */
    Pooling pooling();

    /**
     * The token the model's tokenizer appends to a text it embeds, if any: Qwen3-Embedding's {@code <|endoftext|>}
     * (tokenizer.json's post_processor; a GGUF's tokenizer.ggml.add_eos_token and eos id).
     */
    OptionalInt appendedToken(Tokenizer tokenizer);

    ChatTemplate chatTemplate();

    /** The first mapped file that was truncated or written to since it was opened, if any (a stat() per file). */
    Optional<Path> changedFile();

    /** Unmaps the tensors. */
    @Override
    void close();
}
