package fs.json;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
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

    /** What a field-aware factory was given, kept as the exception's message to be checked. */
    private static final class FieldProblem extends RuntimeException {
        FieldProblem(String text) {
            super(text);
        }
    }

    private static final JsonFields.FieldErrors KEPT_APART = new JsonFields.FieldErrors() {
        @Override
        public RuntimeException invalid(String field, String line) {
            return new FieldProblem("invalid " + field + ": " + line);
        }

        @Override
        public RuntimeException mistyped(String field, String expected, JsonNode found) {
            return new FieldProblem("mistyped " + field + ": " + expected + " / " + JsonFields.kind(found));
        }
    };

    private static void failsWith(Executable read, String text) {
        assertEquals(text, assertThrows(FieldProblem.class, read).getMessage());
    }

    @Test
    void aFieldAwareFactoryIsGivenTheFieldsPathApartFromTheLine() {
        byte[] bytes = """
                {"list": [{"c": 5, "t": "x"}], "big": 10000000000, "half": 1.5, "gone": null, "o": {}}"""
                .getBytes(StandardCharsets.UTF_8);
        JsonFields f = JsonFields.of(StrictJson.parseObject(bytes, 0, bytes.length, "test"), KEPT_APART);
        failsWith(() -> f.element("list", 0).text("c"), "mistyped list[0].c: a string / number");
        failsWith(() -> f.object("o").text("t"), "invalid o.t: o.t is missing");
        failsWith(() -> f.intOrNull("big"), "invalid big: big is out of range: 10000000000");
        failsWith(() -> f.intOrNull("half"), "mistyped half: an integer / number");
        failsWith(() -> { throw f.error("whole"); }, "invalid null: whole");
        assertEquals(10_000_000_000L, f.longOrNull("big"));
        assertEquals(1.5, f.numberOrNull("half"));
        assertEquals("x", f.element("list", 0).textOrNull("t"));
        assertNull(f.textOrNull("gone"));
        assertNull(f.boolOrNull("missing"));
        assertNull(f.intOrNull("gone"));

        JsonFields.FieldErrors lineOnly = (field, line) -> new FieldProblem(field + " | " + line);
        failsWith(() -> JsonFields.of(f.get("o"), lineOnly).bool("b"), "b | b is missing");
        failsWith(() -> JsonFields.of(f.get("list").get(0), lineOnly).bool("t"),
                "t | t must be true or false, found string 'x'");
    }

    @Test
    void showsAValueOnOneShortLine() {
        JsonNode node = fields("{\"a\": [" + "1,".repeat(100) + "1]}").get("a");
        String shown = JsonFields.describe(node);
        assertTrue(shown.startsWith("array [1,1,") && shown.endsWith("…") && shown.length() < 50, shown);
        assertEquals("string 'line\\u000abreak'", JsonFields.describe(fields("{\"s\": \"line\\nbreak\"}").get("s")));
    }
}
