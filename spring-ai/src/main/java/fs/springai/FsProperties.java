package fs.springai;

import fs.api.FsModel;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code fs.*} application properties of {@link FsAutoConfiguration}; a property left out takes fs's default.
 * One more, {@code fs.native-structured-output} (default true), is a condition of the auto-configuration's.
 *
 * @param model          what the chat model loads, as {@link FsModel#load} takes it: a model directory, a .gguf
 *                       file, a Hugging Face repo id or {@code repo:QUANT}; unset: no chat model
 * @param embeddingModel what the embedding model loads (Qwen3-Embedding), as {@code model}; unset: no embedding model
 * @param backend        auto, cpu, java or opencl (default auto)
 * @param threads        CPU threads (default: one per available processor)
 * @param contextLength  KV cache positions, shared out among the slots (default: min(the model's, 4096))
 * @param parallelSlots  chats answered at once, decoded together (default 1)
 * @param temperature    the chat model's default temperature (default: the model's generation_config.json)
 * @param maxTokens      the most tokens per answer (default: until the model ends it or the context is full)
 * @param thinking       whether Qwen3 thinks before it answers (default: the chat template's, which thinks)
 */
@ConfigurationProperties("fs")
public record FsProperties(@Nullable String model, @Nullable String embeddingModel, @Nullable String backend,
                           @Nullable Integer threads, @Nullable Integer contextLength,
                           @Nullable Integer parallelSlots, @Nullable Double temperature,
                           @Nullable Integer maxTokens, @Nullable Boolean thinking) {

    /** Where and how the models run, from the properties that say it. */
    FsModel.Options loadOptions() {
        FsModel.Options options = FsModel.Options.defaults();
        if (backend != null) options = options.withBackend(backend);
        if (threads != null) options = options.withThreads(threads);
        if (contextLength != null) options = options.withContextLength(contextLength);
        if (parallelSlots != null) options = options.withParallelSlots(parallelSlots);
        return options;
    }

    /** The chat model's default options: the model's name for the responses, the sampling the properties set. */
    FsChatOptions chatOptions() {
        return FsChatOptions.builder().model(model).temperature(temperature).maxTokens(maxTokens).thinking(thinking)
                .build();
    }
}
