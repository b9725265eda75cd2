package fs.grammar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What the grammar of a schema accepts, and the schemas refused with their keyword and JSON pointer. */
class JsonSchemaGbnfTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static JsonNode json(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static Grammar grammar(String schema) {
        return Grammar.fromJsonSchema(json(schema));
    }

    private static void accepts(Grammar g, String... texts) {
        for (String t : texts) assertTrue(g.matches(t.getBytes(StandardCharsets.UTF_8)), "should accept " + t);
    }

    private static void refuses(Grammar g, String... texts) {
        for (String t : texts) assertFalse(g.matches(t.getBytes(StandardCharsets.UTF_8)), "should refuse " + t);
    }

    @Test
    void propertiesComeInTheSchemasOrderRequiredOnesAlwaysOptionalOnesMaybe() {
        Grammar g = grammar("""
                {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
                 "required": ["b"]}""");
        accepts(g, "{\"b\":\"x\"}", "{\"a\":1,\"b\":\"\"}", "{\"b\":\"x\",\"c\":true}", "{ \"a\": -3, \"b\": \"é\", \"c\": false }",
                "{\n  \"a\": 0,\n  \"b\": \"q\"\n}");
        refuses(g, "{}", "{\"a\":1}", "{\"b\":\"x\",\"a\":1}", "{\"b\":\"x\",}", "{\"b\":\"x\",\"d\":1}", "{\"b\":1}",
                "{\"a\":01,\"b\":\"x\"}", "{\"b\":\"x\"}  \n  extra");
    }

    @Test
    void additionalPropertiesFalseTrueOrASchema() {
        accepts(grammar("{\"type\":\"object\",\"additionalProperties\":false}"), "{}");
        refuses(grammar("{\"type\":\"object\",\"additionalProperties\":false}"), "{\"x\":1}");
        Grammar open = grammar("{\"properties\":{\"a\":{\"type\":\"null\"}},\"additionalProperties\":true}");
        accepts(open, "{}", "{\"a\":null}", "{\"a\":null,\"x\":[1,{\"y\":\"z\"}]}", "{\"x\":1,\"y\":2}");
        Grammar numbers = grammar("{\"type\":\"object\",\"additionalProperties\":{\"type\":\"number\"}}");
        accepts(numbers, "{\"x\":1.5,\"y\":-2e3}");
        refuses(numbers, "{\"x\":\"1\"}");
    }

    @Test
    void arraysTuplesAndTheirBounds() {
        Grammar bounded = grammar("{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":1,\"maxItems\":3}");
        accepts(bounded, "[1]", "[1,2,3]", "[ 1 , 2 ]");
        refuses(bounded, "[]", "[1,2,3,4]", "[1.5]");
        Grammar tuple = grammar("{\"prefixItems\":[{\"type\":\"string\"},{\"type\":\"boolean\"}],\"items\":false}");
        accepts(tuple, "[\"a\",true]");
        refuses(tuple, "[\"a\"]", "[\"a\",true,1]", "[true,\"a\"]");
        Grammar tupleThenMore = grammar("{\"prefixItems\":[{\"const\":0}],\"items\":{\"type\":\"null\"},\"maxItems\":3}");
        accepts(tupleThenMore, "[0]", "[0,null,null]");
        refuses(tupleThenMore, "[0,null,null,null]", "[null]");
    }

    @Test
    void typesEnumsConstsAlternativesAndReferences() {
        accepts(grammar("{\"type\":[\"integer\",\"null\"]}"), "7", "null", "-12");
        refuses(grammar("{\"type\":[\"integer\",\"null\"]}"), "7.5", "\"7\"");
        accepts(grammar("{\"enum\":[\"a\\\"b\",1,null,{\"k\":[true]}]}"), "\"a\\\"b\"", "1", "null", "{\"k\":[true]}");
        refuses(grammar("{\"enum\":[\"a\",1]}"), "\"b\"", "2");
        accepts(grammar("{\"const\":\"漢字\"}"), "\"漢字\"");
        accepts(grammar("{\"anyOf\":[{\"type\":\"string\",\"maxLength\":2},{\"type\":\"boolean\"}]}"), "\"ab\"", "true");
        refuses(grammar("{\"oneOf\":[{\"type\":\"string\",\"maxLength\":2},{\"type\":\"boolean\"}]}"), "\"abc\"", "1");
        Grammar tree = grammar("""
                {"$ref": "#/$defs/node", "$defs": {"node": {"type": "object", "properties": {
                  "value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                  "required": ["value"]}}}""");
        accepts(tree, "{\"value\":1}", "{\"value\":1,\"children\":[{\"value\":2,\"children\":[{\"value\":3}]}]}");
        refuses(tree, "{\"value\":1,\"children\":[{}]}");
        accepts(grammar("{\"definitions\":{\"s\":{\"type\":\"string\"}},\"items\":{\"$ref\":\"#/definitions/s\"}}"), "[\"a\"]");
    }

    @Test
    void stringLengthsFormatsAndNumbers() {
        Grammar s = grammar("{\"type\":\"string\",\"minLength\":2,\"maxLength\":3}");
        accepts(s, "\"ab\"", "\"漢字😀\"", "\"a\\n\"", "\"\\u00e9\\u00e9\"");
        refuses(s, "\"a\"", "\"abcd\"", "\"\\ud83d\\ude00\"", "\"a\tb\"");
        accepts(grammar("{\"format\":\"date\"}"), "\"2026-12-02\"", "\"2024-02-28\"");
        refuses(grammar("{\"format\":\"date\"}"), "\"2026-13-01\"", "\"2026-02-30\"", "\"2026-04-31\"", "\"26-01-01\"");
        accepts(grammar("{\"format\":\"time\"}"), "\"23:59:59Z\"", "\"00:00:00.123+02:00\"");
        refuses(grammar("{\"format\":\"time\"}"), "\"24:00:00Z\"", "\"12:00:00\"");
        accepts(grammar("{\"format\":\"date-time\"}"), "\"2026-12-02T04:42:08Z\"");
        accepts(grammar("{\"format\":\"uuid\"}"), "\"123e4567-e89b-12d3-a456-426614174000\"");
        refuses(grammar("{\"format\":\"uuid\"}"), "\"123e4567e89b12d3a456426614174000\"");
        accepts(grammar("{\"type\":\"number\"}"), "0", "-0.5", "1e10", "3.25E-2");
        refuses(grammar("{\"type\":\"number\"}"), "01", ".5", "1.", "+1", "1e");
        refuses(grammar("{\"type\":\"integer\"}"), "1.0", "12345678901234567");
    }

    @Test
    void whitespaceIsBoundedSoThatAModelCannotLoopInIt() {
        Grammar g = grammar("{\"type\":\"array\",\"items\":{\"type\":\"null\"}}");
        accepts(g, "[\n" + " ".repeat(20) + "null]");
        refuses(g, "[\n" + " ".repeat(21) + "null]", "[  null]");
        // Between every two tokens: nothing, one space, or a newline and at most 20 spaces or tabs (llama.cpp's rule).
        Grammar object = grammar("""
                {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12},
                 "days": {"type": "integer", "enum": [1, 3, 7]}}, "required": ["city", "days"]}""");
        String indent = "\n" + "\t ".repeat(10);
        accepts(object, "{\"city\":\"Paris\",\"days\":3}", "{ \"city\" : \"Paris\" , \"days\" : 3 }",
                "{" + indent + "\"city\":" + indent + "\"Paris\"," + indent + "\"days\"" + indent + ":3" + indent + "}");
        refuses(object, "{" + indent + "\t\"city\":\"Paris\",\"days\":3}", "{\"city\":\"Paris\",\"days\":3\n\n}",
                "{\"city\":\t\"Paris\",\"days\":3}", "{\"city\": \n\"Paris\",\"days\":3}");
        // OpenAI's json_object: any object, under the same bound.
        accepts(Grammar.anyJsonObject(), "{" + indent + "\"a\": [1," + indent + "{}]}");
        refuses(Grammar.anyJsonObject(), "{" + indent + " \"a\": 1}", "{\"a\":  1}", "{\"a\": [1,\n\n2]}");
    }

    private static String refusal(String schema) {
        return assertThrows(GrammarException.class, () -> Grammar.fromJsonSchema(json(schema))).getMessage();
    }

    @Test
    void oneOfIsHeldWhereItsOptionsCannotOverlapAndRefusedWhereTheyMay() {
        accepts(grammar("{\"oneOf\":[{\"enum\":[\"a\",\"b\"]},{\"const\":\"c\"},{\"type\":\"integer\"}]}"),
                "\"a\"", "\"c\"", "3");
        accepts(grammar("{\"oneOf\":[{\"type\":\"null\"},{\"$ref\":\"#/$defs/s\"}],\"$defs\":{\"s\":{\"type\":\"string\"}}}"),
                "null", "\"x\"");
        String overlap = "schema #/oneOf: options 0 and 1 may both match a value (oneOf is held only for options of"
                + " different types or values; anyOf takes any options)";
        assertEquals(overlap, refusal("{\"oneOf\":[{\"type\":\"string\"},{\"maxLength\":3}]}"));
        assertEquals(overlap, refusal("{\"oneOf\":[{\"type\":\"number\"},{\"type\":\"integer\"}]}"));
        assertEquals(overlap, refusal("{\"oneOf\":[{\"type\":\"string\"},{\"const\":\"a\"}]}"));
        assertEquals(overlap, refusal("{\"oneOf\":[{\"enum\":[1,2]},{\"enum\":[2,3]}]}"));
        assertEquals(overlap, refusal("{\"oneOf\":[{},{\"type\":\"null\"}]}"));
        assertTrue(refusal("{\"properties\":{\"p\":{\"oneOf\":[{\"type\":\"boolean\"},{\"type\":\"integer\"},"
                + "{\"enum\":[true]}]}}}").startsWith("schema #/properties/p/oneOf: options 0 and 2 may both match"));
    }

    @Test
    void unsupportedKeywordsAreRefusedByNameWithTheirPointer() {
        assertEquals("schema #: unsupported keyword 'pattern'", refusal("{\"type\":\"string\",\"pattern\":\"a+\"}"));
        assertEquals("schema #/properties/age: unsupported keyword 'minimum'",
                refusal("{\"properties\":{\"age\":{\"type\":\"integer\",\"minimum\":0}}}"));
        for (String keyword : new String[] {"maximum", "exclusiveMinimum", "multipleOf", "not", "if", "then", "else",
                "patternProperties", "unevaluatedProperties", "dependentRequired", "contains", "uniqueItems", "allOf",
                "propertyNames", "minProperties", "x-vendor"}) {
            assertEquals("schema #/items/prefixItems/0: unsupported keyword '" + keyword + "'",
                    refusal("{\"items\":{\"prefixItems\":[{\"" + keyword + "\":1}]}}"));
        }
        assertEquals("schema #/properties/a~1b/format: unsupported format \"email\"",
                refusal("{\"properties\":{\"a/b\":{\"type\":\"string\",\"format\":\"email\"}}}"));
        assertEquals("schema #/$ref: unsupported $ref 'https://example.com/s.json' (only local ones: #/$defs/... or #/definitions/...)",
                refusal("{\"$ref\":\"https://example.com/s.json\"}"));
        assertEquals("schema #/$ref: $ref '#/$defs/missing' points at nothing", refusal("{\"$ref\":\"#/$defs/missing\"}"));
        assertEquals("schema #/type: unknown type \"float\"", refusal("{\"type\":\"float\"}"));
        assertEquals("schema #/properties/x: schema false matches nothing", refusal("{\"properties\":{\"x\":false}}"));
        assertEquals("schema #: keyword 'type' beside 'anyOf' is not supported",
                refusal("{\"type\":\"string\",\"anyOf\":[{\"maxLength\":1}]}"));
        assertEquals("schema #/maxItems: is below minItems", refusal("{\"minItems\":2,\"maxItems\":1}"));
    }

    @Test
    void descriptiveKeywordsAreIgnored() {
        accepts(grammar("""
                {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "x", "title": "T",
                 "description": "D", "$comment": "C", "default": 1, "examples": [1], "type": "integer"}"""), "1");
    }

    @Test
    void rulesOfSeveralSchemasComposeIntoOneGrammar() {
        String a = JsonSchemaGbnf.rules(json("{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\"}},\"required\":[\"x\"]}"), "tool-a");
        String b = JsonSchemaGbnf.rules(json("{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"), "tool-b");
        for (String line : (a + b).split("\n")) assertTrue(line.startsWith("tool-a") || line.startsWith("tool-b"), line);
        Grammar both = Grammar.parse("root ::= \"A\" tool-a | \"B\" tool-b\n" + a + b);
        accepts(both, "A{\"x\":\"1\"}", "B[\"1\",\"2\"]");
        refuses(both, "A[\"1\"]", "B{\"x\":\"1\"}");
        assertThrows(IllegalArgumentException.class, () -> JsonSchemaGbnf.rules(json("{}"), "bad name"));
    }

    @Test
    void anyJsonObjectIsAnyObjectAndNothingElse() {
        Grammar g = Grammar.anyJsonObject();
        accepts(g, "{}", "{\"a\":[1,{\"b\":null}],\"c\":\"d\"}");
        refuses(g, "[]", "1", "\"x\"", "{\"a\"}");
    }
}
