package fs.json;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class JsonFieldsTest {
    /** The caller's exception type, to show the factory makes what is thrown. */
    private static final class BadRequest extends RuntimeException {
        BadRequest(String message) {
            super(message);
        }
    }

    private static JsonFields fields(String json) {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        return JsonFields.of(StrictJson.parseObject(bytes, 0, bytes.length, "test"), BadRequest::new);
    }

    private static void fails(Executable read, String message) {
        assertEquals(message, assertThrows(BadRequest.class, read).getMessage());
    }

    @Test
    void readsTypedValuesAndTheirDefaults() {
        JsonFields f = fields("""
                {"n": 3, "x": 0.5, "b": false, "s": "text", "a": [1, 2], "gone": null, "o": {"k": 4}}""");
        assertEquals(3, f.positiveInt("n"));
        assertEquals(0.5f, f.positiveFloat("x"));
        assertEquals(0.5, f.number("x"));
        assertFalse(f.bool("b"));
        assertTrue(f.bool("gone", true), "null reads as absent");
        assertEquals("text", f.text("s"));
        assertArrayEquals(new long[] {1, 2}, f.longs("a", 2));
        assertEquals(4, f.object("o").positiveInt("k"));
        assertFalse(f.has("gone"));
        assertFalse(f.has("missing"));
    }

    @Test
    void eachProblemIsTheFactorysExceptionNamingTheFieldAndWhatWasFound() {
        JsonFields f = fields("""
                {"n": "3", "x": -1, "b": 1, "a": [1, 2.5], "o": {"k": true}, "list": [{"k": 1}, 7], "gone": null}""");
        fails(() -> f.positiveInt("n"), "n must be a positive integer, found string '3'");
        fails(() -> f.positiveFloat("x"), "x must be a positive number (as a float), found number -1");
        fails(() -> f.bool("b"), "b must be true or false, found number 1");
        fails(() -> f.longs("a", -1), "a must be an array of integers, found number 2.5");
        fails(() -> f.longs("a", 3), "a must have 3 elements, found 2");
        fails(() -> f.text("gone"), "gone is missing");
        fails(() -> f.object("o").positiveInt("k"), "o.k must be a positive integer, found boolean true");
        assertEquals(1, f.element("list", 0).positiveInt("k"));
        fails(() -> f.element("list", 1), "list[1] must be an object, found number 7");
        fails(() -> f.array("o"), "o must be an array, found object {\"k\":true}");
    }

    @Test
    void showsAValueOnOneShortLine() {
        JsonNode node = fields("{\"a\": [" + "1,".repeat(100) + "1]}").get("a");
        String shown = JsonFields.describe(node);
        assertTrue(shown.startsWith("array [1,1,") && shown.endsWith("…") && shown.length() < 50, shown);
        assertEquals("string 'line\\u000abreak'", JsonFields.describe(fields("{\"s\": \"line\\nbreak\"}").get("s")));
    }
}
