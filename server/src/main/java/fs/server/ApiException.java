package fs.server;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A request the server answers with an error: the HTTP status and OpenAI's error object
 * {@code {"error":{"message","type","param","code"}}}, whose message says in plain words what to change.
 */
final class ApiException extends RuntimeException {
    final int status;
    final String type;
    final String code;
    final String param; // null when no single request field is at fault

    ApiException(int status, String type, String code, String param, String message) {
        super(message);
        this.status = status;
        this.type = type;
        this.code = code;
        this.param = param;
    }

    /** A request field with a value the server cannot use (400). */
    static ApiException invalid(String param, String message) {
        return new ApiException(400, "invalid_request_error", "invalid_value", param, message);
    }

    /** A request field of the wrong JSON type (400), worded as OpenAI words it. */
    static ApiException wrongType(String param, String expected, String got) {
        return new ApiException(400, "invalid_request_error", "invalid_type", param,
                "invalid type for '" + param + "': expected " + expected + ", but got " + got + " instead");
    }

    /** A field OpenAI defines that this server does not implement, given a value that would need it (400). */
    static ApiException unsupported(String param, String message) {
        return new ApiException(400, "invalid_request_error", "unsupported_value", param, message);
    }

    /** The server cannot take the request now (503); the client should retry. */
    static ApiException unavailable(String code, String message) {
        return new ApiException(503, "server_error", code, null, message);
    }

    /** The error object, as the response body. */
    ObjectNode body() {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        ObjectNode error = root.putObject("error");
        error.put("message", getMessage());
        error.put("type", type);
        error.put("param", param);
        error.put("code", code);
        return root;
    }
}
