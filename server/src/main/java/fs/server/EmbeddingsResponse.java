package fs.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.List;

/** OpenAI's embeddings response, as {@code POST /v1/embeddings} answers and {@code fs embed --json} prints it. */
public final class EmbeddingsResponse {
    private EmbeddingsResponse() {}

    /**
     * The vectors in order, the model as named, the tokens run as usage.
     *
     * @param base64 each vector as the base64 of its little-endian float32 bytes ({@code encoding_format: base64})
     */
    public static ObjectNode of(List<float[]> vectors, List<int[]> sequences, String model, boolean base64) {
        ObjectNode response = JsonNodeFactory.instance.objectNode();
        response.put("object", "list");
        ArrayNode data = response.putArray("data");
        for (int i = 0; i < vectors.size(); i++) {
            ObjectNode entry = data.addObject();
            entry.put("object", "embedding");
            entry.put("index", i);
            if (base64) {
                entry.put("embedding", base64(vectors.get(i)));
            } else {
                ArrayNode vector = entry.putArray("embedding");
                for (float v : vectors.get(i)) vector.add(v);
            }
        }
        response.put("model", model);
        usage(response, sequences);
        return response;
    }

    /** OpenAI's usage of a request that only reads: prompt_tokens, as many total_tokens. */
    static void usage(ObjectNode response, List<int[]> sequences) {
        long tokens = 0;
        for (int[] sequence : sequences) tokens += sequence.length;
        response.putObject("usage").put("prompt_tokens", tokens).put("total_tokens", tokens);
    }

    /** The vector's float32 values, little-endian, in base64: what OpenAI's {@code encoding_format: base64} sends. */
    static String base64(float[] vector) {
        ByteBuffer bytes = ByteBuffer.allocate(vector.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asFloatBuffer().put(vector);
        return Base64.getEncoder().encodeToString(bytes.array());
    }
}
