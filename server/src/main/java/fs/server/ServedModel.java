package fs.server;

import fs.chat.ChatTemplate;
import fs.embed.ScheduledRetrieval;
import fs.generate.SamplingParams;
import fs.tokenizer.Tokenizer;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The model the server answers with, once it is loaded: what the HTTP layer needs to turn a request into token ids
 * and back, the engine that generates, and what embeds and reranks.
 *
 * @param id             the name /v1/models lists and requests must give (or leave out)
 * @param createdSeconds when it was loaded (Unix time), shown in /v1/models
 * @param details        what the model is (format, family, size), which Ollama's /api/tags and /api/show describe
 * @param chatTemplate   the template, or an FsException saying why the model has none usable (then chat requests
 *                       get that message as a 400, completions still work)
 * @param defaults       the sampling of a request that leaves a field out, drawn for each request (a fresh random
 *                       seed unless the server fixes one): generation_config.json's (else Hugging Face's) under
 *                       fs serve's sampling flags; an FsException from it is the server's fault (500)
 * @param task           the endpoints it answers; the others are refused with a 501 naming the flag
 * @param retrieval      embeds or reranks on the engine's scheduler; null when the task is {@link ServedTask#CHAT}
 */
public record ServedModel(
        String id,
        long createdSeconds,
        ModelDetails details,
        Tokenizer tokenizer,
        Supplier<ChatTemplate> chatTemplate,
        Supplier<SamplingParams> defaults,
        CompletionEngine engine,
        ServedTask task,
        ScheduledRetrieval retrieval) {

    public ServedModel {
        Objects.requireNonNull(details, "details");
        Objects.requireNonNull(task, "task");
        if (task != ServedTask.CHAT) Objects.requireNonNull(retrieval, "retrieval");
    }

    /** A model served for chat and text completions. */
    public static ServedModel forChat(String id, long createdSeconds, ModelDetails details, Tokenizer tokenizer,
                                      Supplier<ChatTemplate> chatTemplate, Supplier<SamplingParams> defaults,
                                      CompletionEngine engine) {
        return new ServedModel(id, createdSeconds, details, tokenizer, chatTemplate, defaults, engine,
                ServedTask.CHAT, null);
    }

    /** Refuses a request for another task with the 501 that names the flag to start the server with. */
    void require(ServedTask wanted) {
        if (task != wanted) throw wanted.notServedBy(task);
    }

    /** Refuses a request that names another model (404, as OpenAI answers it); null names none. */
    void requireNamed(String model) {
        if (model != null && !model.equals(id)) {
            throw new ApiException(404, "invalid_request_error", "model_not_found", "model", "the model "
                    + fs.Quoted.quote(model) + " does not exist: this server serves " + fs.Quoted.quote(id)
                    + " (see GET /v1/models)");
        }
    }
}
