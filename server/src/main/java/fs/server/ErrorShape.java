package fs.server;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * How an API fs serve speaks writes an error's body: OpenAI's {@code {"error":{"message","type","param","code"}}}
 * ({@link ApiException#body}) unless the route belongs to another API, which {@link Exchange#speaks} says. The
 * status and the message are the {@link ApiException}'s in every shape.
 */
@FunctionalInterface
interface ErrorShape {
    ObjectNode body(ApiException error);
}
