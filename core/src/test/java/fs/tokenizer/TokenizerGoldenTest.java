package fs.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Qwen3's tokenizer against goldens made by Hugging Face's tokenizers and by llama.cpp's test suite. */
class TokenizerGoldenTest {
    private final Tokenizer tokenizer = Qwen3Files.tokenizer();

    @Test
    void encodesTheHuggingFaceGoldens() {
        List<JsonNode> cases = Qwen3Files.jsonLines("qwen3_tokenizer_golden.jsonl");
        assertEquals(177, cases.size());
        for (JsonNode c : cases) {
            String text = c.get("text").asText();
            String label = "case " + c.get("n") + " (" + c.get("category").asText() + ") " + c.get("text");
            int[] ids = tokenizer.encode(text);
            assertArrayEquals(Qwen3Files.ints(c.get("ids")), ids, label);
            List<String> tokens = new ArrayList<>();
            for (int id : ids) tokens.add(tokenizer.token(id));
            List<String> expectedTokens = new ArrayList<>();
            c.get("tokens").forEach(t -> expectedTokens.add(t.asText()));
            assertEquals(expectedTokens, tokens, label);
            // The golden has no pre-tokens for texts with added tokens in them.
            if (!c.get("pretokens").isNull()) {
                List<String> expectedPreTokens = new ArrayList<>();
                c.get("pretokens").forEach(t -> expectedPreTokens.add(t.asText()));
                assertEquals(expectedPreTokens, tokenizer.preTokens(text), label);
            }
            assertEquals(c.get("decoded").asText(), tokenizer.decode(ids, false), label);
            assertEquals(c.get("decoded_skip_special").asText(), tokenizer.decode(ids, true), label);
        }
    }

    @Test
    void decodesTheHuggingFaceGoldens() {
        List<JsonNode> cases = Qwen3Files.jsonLines("qwen3_decode_golden.jsonl");
        assertEquals(11, cases.size());
        for (JsonNode c : cases) {
            int[] ids = Qwen3Files.ints(c.get("ids"));
            assertEquals(c.get("decoded").asText(), tokenizer.decode(ids, false), Arrays.toString(ids));
            assertEquals(c.get("decoded_skip_special").asText(), tokenizer.decode(ids, true), Arrays.toString(ids));
            for (int i = 0; i < ids.length; i++) assertEquals(c.get("tokens").get(i).asText(), tokenizer.token(ids[i]));
        }
    }

    @Test
    void encodesLlamaCppVectors() {
        String[] inputs = Qwen3Files.text("llamacpp-vocab-qwen2.inp").split("\n__ggml_vocab_test__\n", -1);
        List<String> outputs = Qwen3Files.text("llamacpp-vocab-qwen2.out").lines().toList();
        // The file ends with a separator, which leaves one empty string after the last input.
        assertEquals("", inputs[inputs.length - 1]);
        assertEquals(46, inputs.length - 1);
        assertEquals(46, outputs.size());
        for (int i = 0; i < 46; i++) {
            int[] expected = outputs.get(i).isBlank()
                    ? new int[0]
                    : Arrays.stream(outputs.get(i).trim().split(" ")).mapToInt(Integer::parseInt).toArray();
            assertArrayEquals(expected, tokenizer.encode(inputs[i]), "input " + i + ": [" + inputs[i] + "]");
        }
    }
}
