package fs.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.generate.SamplingParams;
import fs.json.JsonFields;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * llama-server's utility endpoints, in its shapes, read-only: {@code POST /tokenize}, {@code POST /detokenize},
 * {@code POST /apply-template} (the prompt a chat request would be given, as text), {@code GET /props} and
 * {@code GET /slots}. Tools that count tokens or build prompts themselves call them.
 */
final class LlamaServerUtility {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    /** The most ids a 400 lists of those outside the vocabulary. */
    private static final int IDS_SHOWN = 10;

    private LlamaServerUtility() {}

    /**
     * {@code {content, add_special, parse_special, with_pieces}} to {@code {tokens: [ids]}}, or with pieces
     * {@code [{id, piece}]}: the token's text, or its bytes as numbers when they are not whole UTF-8 characters.
     */
    static void tokenize(Exchange exchange, ServedModel served) throws IOException {
        JsonFields fields = JsonFields.of(exchange.readJsonObject(ApiServer.MAX_BODY_BYTES),
                CompletionRequest.API_ERRORS);
        String content = fields.text("content");
        fields.bool("add_special", false); // the tokenizers fs serves add no BOS or EOS (Qwen3's add_bos_token: false)
        if (!fields.bool("parse_special", true)) {
            throw ApiException.unsupported("parse_special", "'parse_special': false is not supported: this server's "
                    + "tokenizer always reads a special token's text as that token");
        }
        boolean withPieces = fields.bool("with_pieces", false);
        Tokenizer tokenizer = served.tokenizer();
        ArrayNode tokens = NODES.arrayNode();
        for (int id : tokenizer.encode(content)) {
            if (!withPieces) {
                tokens.add(id);
                continue;
            }
            ObjectNode token = tokens.addObject();
            token.put("id", id);
            byte[] bytes = tokenizer.tokenBytes(id);
            String text = wholeUtf8(bytes);
            if (text != null) {
                token.put("piece", text);
            } else {
                ArrayNode piece = token.putArray("piece");
                for (byte b : bytes) piece.add(b & 0xFF);
            }
        }
        ObjectNode answer = NODES.objectNode();
        answer.set("tokens", tokens);
        exchange.sendJson(200, answer);
    }

    /** {@code {tokens: [ids]}} to {@code {content}}, special tokens written out; an id outside the vocabulary is a 400. */
    static void detokenize(Exchange exchange, ServedModel served) throws IOException {
        JsonFields fields = JsonFields.of(exchange.readJsonObject(ApiServer.MAX_BODY_BYTES),
                CompletionRequest.API_ERRORS);
        long[] given = fields.longs("tokens", -1);
        Tokenizer tokenizer = served.tokenizer();
        int[] ids = new int[given.length];
        List<Long> outside = new ArrayList<>();
        for (int i = 0; i < given.length; i++) {
            if (given[i] < 0 || given[i] >= tokenizer.vocabSize()) {
                outside.add(given[i]);
            } else {
                ids[i] = (int) given[i];
            }
        }
        if (!outside.isEmpty()) {
            throw ApiException.invalid("tokens", "token ids outside the vocabulary (0.." + (tokenizer.vocabSize() - 1)
                    + "): " + String.join(", ", outside.stream().limit(IDS_SHOWN).map(String::valueOf).toList())
                    + (outside.size() > IDS_SHOWN ? " and " + (outside.size() - IDS_SHOWN) + " more" : ""));
        }
        String content;
        try {
            content = tokenizer.decode(ids, false);
        } catch (FsException e) { // an id inside the range that names no token
            throw ApiException.invalid("tokens", e.getMessage());
        }
        ObjectNode answer = NODES.objectNode();
        answer.put("content", content);
        exchange.sendJson(200, answer);
    }

    /**
     * A chat completion request's {@code messages}, {@code tools} and {@code chat_template_kwargs.enable_thinking}
     * (or llama-server's {@code enable_thinking}) to {@code {prompt}}: the chat template's text that request's
     * prompt would be, the assistant's header included.
     */
    static void applyTemplate(Exchange exchange, ServedModel served) throws IOException {
        JsonNode body = exchange.readJsonObject(ApiServer.MAX_BODY_BYTES);
        CompletionRequest request = CompletionRequest.chat(body);
        CompletionRequest.Prompt.Chat chat = (CompletionRequest.Prompt.Chat) request.prompt();
        Boolean enableThinking = JsonFields.of(body, CompletionRequest.API_ERRORS).boolOrNull("enable_thinking");
        String prompt;
        try {
            prompt = served.chatTemplate().get().render(chat.messages(), request.tools().templateTools(), true,
                    enableThinking != null ? enableThinking : chat.enableThinking());
        } catch (FsException e) { // no template, or one the messages break (a system message that is not first)
            throw ApiException.invalid("messages", e.getMessage());
        }
        ObjectNode answer = NODES.objectNode();
        answer.put("prompt", prompt);
        exchange.sendJson(200, answer);
    }

    /**
     * What llama-server's {@code GET /props} says that fs knows: the defaults a request that leaves sampling out
     * gets, each slot's context, the slots, the model's name, its chat template and the build.
     */
    static void props(Exchange exchange, ServedModel served) throws IOException {
        CompletionEngine engine = served.engine();
        ObjectNode answer = NODES.objectNode();
        ObjectNode settings = answer.putObject("default_generation_settings");
        settings.put("id", 0);
        settings.put("id_task", -1);
        settings.put("n_ctx", engine.contextLength());
        settings.put("is_processing", false);
        ObjectNode params = settings.putObject("params");
        SamplingParams defaults = served.defaults().get();
        params.put("n_predict", -1); // until the model stops or the context is full
        params.put("temperature", defaults.temperature());
        params.put("top_k", defaults.topK());
        params.put("top_p", defaults.topP());
        params.put("min_p", defaults.minP());
        params.put("repeat_penalty", defaults.repeatPenalty());
        params.put("presence_penalty", defaults.presencePenalty());
        params.put("frequency_penalty", defaults.frequencyPenalty());
        params.putArray("stop");
        params.put("max_tokens", -1);
        answer.put("total_slots", engine.load().slots());
        answer.put("model_path", served.id());
        answer.put("model_alias", served.id());
        String template;
        try {
            template = served.chatTemplate().get().jinja();
        } catch (FsException e) { // the model has no template fs can render: there is none to show
            template = "";
        }
        answer.put("chat_template", template);
        ObjectNode modalities = answer.putObject("modalities");
        modalities.put("vision", false);
        modalities.put("audio", false);
        answer.put("build_info", buildInfo());
        exchange.sendJson(200, answer);
    }

    /**
     * llama-server's {@code GET /slots}, read-only: each slot's id, context and whether it is busy. The engine counts
     * its busy slots but does not say which are busy, so the first {@code busy} ids are reported busy.
     */
    static void slots(Exchange exchange, ServedModel served) throws IOException {
        CompletionEngine engine = served.engine();
        CompletionEngine.Load load = engine.load();
        ArrayNode slots = NODES.arrayNode();
        for (int id = 0; id < load.slots(); id++) {
            ObjectNode slot = slots.addObject();
            slot.put("id", id);
            slot.put("n_ctx", engine.contextLength());
            slot.put("is_processing", id < load.busy());
        }
        exchange.sendJson(200, slots);
    }

    /** The bytes as text, or null when they are not whole UTF-8 characters (a token that is part of one). */
    private static String wholeUtf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** "fs VERSION (commit C)" as the build wrote it into fs's jar; "fs dev" when run from classes. */
    private static String buildInfo() {
        Properties build = new Properties();
        try (InputStream in = LlamaServerUtility.class.getResourceAsStream("/fs/build.properties")) {
            if (in != null) build.load(in);
        } catch (IOException e) {
            // unreadable: the build is unknown
        }
        String commit = build.getProperty("commit", "");
        return "fs " + build.getProperty("version", "dev") + (commit.isBlank() ? "" : " (commit " + commit + ")");
    }
}
