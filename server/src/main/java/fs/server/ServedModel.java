package fs.server;

import fs.chat.ChatTemplate;
import fs.generate.SamplingParams;
import fs.tokenizer.Tokenizer;
import java.util.function.Supplier;

/**
 * The model the server answers with, once it is loaded: what the HTTP layer needs to turn a request into token ids
 * and back, and the engine that generates.
 *
 * @param id             the name /v1/models lists and requests must give (or leave out)
 * @param createdSeconds when it was loaded (Unix time), shown in /v1/models
 * @param chatTemplate   the template, or an FsException saying why the model has none usable (then chat requests
 *                       get that message as a 400, completions still work)
 * @param defaults       the sampling of a request that leaves a field out, drawn for each request (a fresh random
 *                       seed unless the server fixes one): generation_config.json's (else Hugging Face's) under
 *                       fs serve's sampling flags; an FsException from it is the server's fault (500)
 */
public record ServedModel(
        String id,
        long createdSeconds,
        Tokenizer tokenizer,
        Supplier<ChatTemplate> chatTemplate,
        Supplier<SamplingParams> defaults,
        CompletionEngine engine) {}
