package fs.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import fs.FsException;
import fs.safetensors.StrictJson;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Reading a request body and writing whole responses, for every handler of the server. */
final class Exchanges {
    static final ObjectMapper JSON = new ObjectMapper();

    private Exchanges() {}

    /** The request body as a JSON object; too large (413), or not a JSON object (400), is refused. */
    static JsonNode readJsonObject(HttpExchange exchange, int maxBytes) throws IOException {
        String length = exchange.getRequestHeaders().getFirst("Content-Length");
        if (length != null) {
            long declared;
            try {
                declared = Long.parseLong(length.strip());
            } catch (NumberFormatException e) {
                throw new ApiException(400, "invalid_request_error", "invalid_request", null,
                        "the Content-Length header is not a number");
            }
            if (declared > maxBytes) throw tooLarge(maxBytes); // refused before a byte of it is read
        }
        byte[] body = exchange.getRequestBody().readNBytes(maxBytes + 1);
        if (body.length > maxBytes) throw tooLarge(maxBytes);
        try {
            return StrictJson.parseObject(body, 0, body.length, "the request body");
        } catch (FsException e) {
            throw new ApiException(400, "invalid_request_error", "invalid_json", null, e.getMessage());
        }
    }

    private static ApiException tooLarge(int maxBytes) {
        return new ApiException(413, "invalid_request_error", "request_too_large", null,
                "the request body is larger than " + maxBytes + " bytes, the most this server reads");
    }

    static void sendJson(HttpExchange exchange, int status, JsonNode body) throws IOException {
        send(exchange, status, "application/json", JSON.writeValueAsBytes(body));
    }

    static void sendText(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        send(exchange, status, contentType, body.getBytes(StandardCharsets.UTF_8));
    }

    /** The error object with its status; a 503 says when to retry. */
    static void sendError(HttpExchange exchange, ApiException error) throws IOException {
        if (error.status == 503) exchange.getResponseHeaders().set("Retry-After", "1");
        if (error.status == 413) exchange.getResponseHeaders().set("Connection", "close"); // the body was not read
        sendJson(exchange, error.status, error.body());
    }

    private static void send(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
