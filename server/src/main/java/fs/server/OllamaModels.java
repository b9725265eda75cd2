package fs.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.json.JsonFields;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;

/**
 * The served model in Ollama's words: its name ("model:tag", the tag "latest" when the served name has none), the
 * check that a request names it (else Ollama's 404), and what {@code /api/tags}, {@code /api/ps}, {@code /api/show}
 * and {@code /api/version} answer; and Ollama's error body, {@code {"error": "message"}}.
 */
final class OllamaModels {
    /** The Ollama release whose API this one matches (think, tool_name, format schemas): what /api/version says. */
    static final String VERSION = "0.9.0";
    /** When a loaded model is unloaded, for /api/ps: never, while fs serve runs (keep_alive is ignored). */
    private static final Instant NEVER = Instant.parse("9999-12-31T23:59:59Z");

    /** Ollama's error body: the message alone. */
    static final ErrorShape ERRORS = error -> JsonNodeFactory.instance.objectNode().put("error", error.getMessage());

    private OllamaModels() {}

    /** The name Ollama's clients see: the served name, with ":latest" when it has no tag. */
    static String name(ServedModel served) {
        return served.id().contains(":") ? served.id() : served.id() + ":latest";
    }

    /** Refuses a request for another model as Ollama does: 404, "model "x" not found, try pulling it first". */
    static void requireServed(ServedModel served, String model) {
        if (!model.equals(served.id()) && !model.equals(name(served))) {
            String quoted = fs.Quoted.quote(model); // one line, cut short; in Ollama's double quotes
            throw new ApiException(404, "invalid_request_error", "model_not_found", "model", "model \""
                    + quoted.substring(1, quoted.length() - 1) + "\" not found, try pulling it first (this server "
                    + "serves \"" + name(served) + "\")");
        }
    }

    /** {@code GET /api/tags}: the served model, none while it loads. */
    static ObjectNode tags(ServedModel served) {
        ObjectNode list = JsonNodeFactory.instance.objectNode();
        var models = list.putArray("models");
        if (served != null) {
            ObjectNode entry = models.addObject();
            describe(entry, served);
            entry.put("modified_at", served.details().modified().toString());
        }
        return list;
    }

    /** {@code GET /api/ps}: the served model, loaded until fs serve stops; none while it loads. */
    static ObjectNode running(ServedModel served) {
        ObjectNode list = JsonNodeFactory.instance.objectNode();
        var models = list.putArray("models");
        if (served != null) {
            ObjectNode entry = models.addObject();
            describe(entry, served);
            entry.put("expires_at", NEVER.toString());
            entry.put("context_length", served.engine().contextLength());
        }
        return list;
    }

    /** {@code POST /api/show} of {@code body}, which names the served model ("model", or the older "name"). */
    static ObjectNode show(ServedModel served, JsonNode body) {
        JsonFields fields = JsonFields.of(body, CompletionRequest.API_ERRORS);
        String model = fields.textOrNull("model");
        if (model == null || model.isEmpty()) model = fields.textOrNull("name");
        if (model == null || model.isEmpty()) throw ApiException.invalid("model", "model is required");
        requireServed(served, model);
        ModelDetails details = served.details();
        ObjectNode show = JsonNodeFactory.instance.objectNode();
        show.put("license", "");
        show.put("modelfile", "# served by fs serve, which reads the model's own files (no Modelfile)\nFROM "
                + name(served) + "\n");
        show.put("parameters", "");
        show.put("template", ""); // the model's Jinja template, which Ollama's Go templates cannot show
        show.set("details", details(details));
        ObjectNode info = show.putObject("model_info");
        info.put("general.architecture", details.family());
        info.put("general.parameter_count", details.parameters());
        info.put(details.family() + ".context_length", served.engine().contextLength());
        if (served.retrieval() != null) {
            info.put(details.family() + ".embedding_length", served.retrieval().hiddenSize());
        }
        var capabilities = show.putArray("capabilities");
        switch (served.task()) {
            case CHAT -> capabilities.add("completion").add("tools");
            case EMBEDDING -> capabilities.add("embedding");
            case RERANK -> { } // Ollama's API has no reranking
        }
        show.put("modified_at", details.modified().toString());
        return show;
    }

    /** {@code GET /api/version}. */
    static ObjectNode version() {
        return JsonNodeFactory.instance.objectNode().put("version", VERSION);
    }

    /** The fields /api/tags and /api/ps share: name, model, size, digest, details. */
    private static void describe(ObjectNode entry, ServedModel served) {
        entry.put("name", name(served));
        entry.put("model", name(served));
        entry.put("size", served.details().bytes());
        entry.put("digest", digest(served));
        entry.set("details", details(served.details()));
    }

    private static ObjectNode details(ModelDetails details) {
        ObjectNode node = JsonNodeFactory.instance.objectNode();
        node.put("parent_model", "");
        node.put("format", details.format());
        node.put("family", details.family());
        node.putArray("families").add(details.family());
        node.put("parameter_size", details.sizeLabel());
        node.put("quantization_level", quantizationLevel(details.fileType()));
        return node;
    }

    /**
     * Ollama's name of a llama.cpp file type: "Q4_K - Medium" is "Q4_K_M", "IQ2_XXS - 2.0625 bpw" "IQ2_XXS",
     * "all F32" "F32"; llama.cpp's guess is named as the type it guessed.
     */
    static String quantizationLevel(String fileType) {
        String type = fileType.replace("(guessed) ", "").replace("all F32", "F32");
        int dash = type.indexOf(" - ");
        if (dash < 0) return type;
        String base = type.substring(0, dash);
        return switch (type.substring(dash + 3)) {
            case "Small" -> base + "_S";
            case "Medium" -> base + "_M";
            case "Large" -> base + "_L";
            default -> base;
        };
    }

    /**
     * Ollama's digest names a model's files by their SHA-256; hashing gigabytes at each start would be slow, so this
     * one is the SHA-256 of what identifies the served files: the name, format, size, parameters and modified time.
     */
    private static String digest(ServedModel served) {
        ModelDetails details = served.details();
        String identity = served.id() + "\n" + details.format() + "\n" + details.bytes() + "\n"
                + details.parameters() + "\n" + details.modified();
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(identity.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
