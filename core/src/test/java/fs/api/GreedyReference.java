package fs.api;

import fs.backend.cpu.VectorBackend;
import fs.chat.ChatMessage;
import fs.chat.ChatTemplate;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.model.TestModel;
import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.List;

/**
 * What {@code fs run --temp 0} answers on models/tiny-tied, computed with the existing {@link Generator} on a model of
 * its own: the reference the library's and its providers' greedy answers must equal. Thread-safe (one sequence,
 * taken in turn).
 */
public final class GreedyReference implements AutoCloseable {
    public static final Path MODEL = Path.of(System.getProperty("fs.repo"), "models", "tiny-tied");

    private final TestModel model;
    private final Tokenizer tokenizer;
    private final ChatTemplate template;
    private final int[] stopIds;

    public GreedyReference(int contextLength) {
        model = TestModel.open(MODEL, new VectorBackend(2), contextLength, 64, 1);
        tokenizer = Tokenizer.load(MODEL);
        template = ChatTemplate.load(MODEL);
        try (ModelSource source = ModelSource.open(MODEL)) {
            stopIds = source.stopIds();
        }
    }

    /** The prompt ids of {@code messages} through the chat template, thinking left to the template. */
    public int[] prompt(List<ChatMessage> messages) {
        return tokenizer.encode(template.render(messages, true, null));
    }

    /** The greedy generation after {@code messages}, at most {@code maxTokens} tokens. */
    public Generator.Generation generate(List<ChatMessage> messages, int maxTokens) {
        return generate(messages, maxTokens, SamplingParams.greedy());
    }

    /** The generation after {@code messages} with {@code params}, at most {@code maxTokens} tokens. */
    public synchronized Generator.Generation generate(List<ChatMessage> messages, int maxTokens,
                                                      SamplingParams params) {
        return new Generator(model.sequence(), stopIds, params).generate(prompt(messages), maxTokens, id -> {});
    }

    /** The text a user sees of a generation (special tokens left out). */
    public String text(Generator.Generation generation) {
        return tokenizer.decode(generation.ids(), true);
    }

    @Override
    public void close() {
        model.close();
    }
}
