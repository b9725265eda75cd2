package fs.grammar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import fs.backend.cpu.VectorBackend;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.model.Golden;
import fs.model.TestModel;
import fs.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The property: whatever a model writes under a schema's grammar is JSON valid for the schema. Random schemas
 * (nested objects, arrays, enums, anyOf... depth up to 4) and a random model (tiny-tied) sampling at temperature 1, so
 * that the outputs wander everywhere the grammar lets them; every output is checked by an independent validator
 * (networknt's json-schema-validator) against the schema as written.
 */
class SchemaGenerationPropertyTest {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final ObjectMapper STRICT = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final SchemaRegistry VALIDATORS = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

    private static final int OUTPUTS = 16;

    private static TestModel model;
    private static Tokenizer tokenizer;

    @BeforeAll
    static void open() {
        model = TestModel.open(Golden.modelDir("tiny-tied"), new VectorBackend(2), 1024, 16, 1);
        tokenizer = GrammarConstraintTest.TOKENIZER;
    }

    @AfterAll
    static void close() {
        model.close();
    }

    /** Random schemas of the supported keywords, each value bounded (strings by maxLength, arrays by maxItems). */
    private static final class Schemas {
        private final Random random;
        private final ObjectNode defs = JSON.objectNode();

        Schemas(long seed) {
            random = new Random(seed);
        }

        ObjectNode root() {
            ObjectNode root = object(0);
            if (!defs.isEmpty()) root.set("$defs", defs);
            root.put("$schema", "https://json-schema.org/draft/2020-12/schema");
            return root;
        }

        ObjectNode schema(int depth) {
            int kinds = depth >= 4 ? 8 : 12;
            return switch (random.nextInt(kinds)) {
                case 0 -> string();
                case 1 -> typed("integer");
                case 2 -> typed("number");
                case 3 -> typed("boolean");
                case 4 -> typed("null");
                case 5 -> enumeration();
                case 6 -> JSON.objectNode().set("const", literal());
                case 7 -> random.nextBoolean() ? string() : formatted();
                case 8, 9 -> random.nextBoolean() ? object(depth + 1) : array(depth + 1);
                case 10 -> anyOf(depth + 1);
                default -> reference(depth + 1);
            };
        }

        private ObjectNode typed(String type) {
            return JSON.objectNode().put("type", type);
        }

        private ObjectNode string() {
            ObjectNode s = typed("string");
            int max = random.nextInt(9);
            s.put("maxLength", max);
            if (random.nextBoolean()) s.put("minLength", random.nextInt(max + 1));
            return s;
        }

        private ObjectNode formatted() {
            String[] formats = {"date", "time", "date-time", "uuid"};
            return typed("string").put("format", formats[random.nextInt(formats.length)]);
        }

        private com.fasterxml.jackson.databind.JsonNode literal() {
            return switch (random.nextInt(5)) {
                case 0 -> JSON.textNode(List.of("red", "é\"q\\", "", "漢字 x", "a\nb").get(random.nextInt(5)));
                case 1 -> JSON.numberNode(random.nextInt(2000) - 1000);
                case 2 -> JSON.numberNode(random.nextInt(1000) / 8.0);
                case 3 -> JSON.booleanNode(random.nextBoolean());
                default -> JSON.nullNode();
            };
        }

        private ObjectNode enumeration() {
            ArrayNode values = JSON.arrayNode();
            int n = 1 + random.nextInt(4);
            for (int i = 0; i < n; i++) {
                com.fasterxml.jackson.databind.JsonNode v = literal();
                boolean repeated = false;
                for (com.fasterxml.jackson.databind.JsonNode w : values) repeated |= w.equals(v);
                if (!repeated) values.add(v);
            }
            return JSON.objectNode().set("enum", values);
        }

        ObjectNode object(int depth) {
            ObjectNode o = typed("object");
            ObjectNode properties = o.putObject("properties");
            ArrayNode required = JSON.arrayNode();
            int n = random.nextInt(5);
            for (int i = 0; i < n; i++) {
                String name = List.of("id", "name", "items", "ünï", "a b", "x\"y")
                        .get(random.nextInt(6)) + i;
                properties.set(name, schema(depth));
                if (random.nextBoolean()) required.add(name);
            }
            if (!required.isEmpty()) o.set("required", required);
            if (random.nextBoolean()) o.put("additionalProperties", false);
            if (random.nextInt(4) == 0) o.put("description", "ignored");
            return o;
        }

        private ObjectNode array(int depth) {
            ObjectNode a = typed("array");
            if (random.nextInt(3) == 0) {
                ArrayNode prefix = a.putArray("prefixItems");
                int n = 1 + random.nextInt(3);
                for (int i = 0; i < n; i++) prefix.add(schema(depth));
                a.put("items", false);
                return a;
            }
            a.set("items", schema(depth));
            int max = random.nextInt(4);
            a.put("maxItems", max);
            if (random.nextBoolean()) a.put("minItems", random.nextInt(max + 1));
            return a;
        }

        /** anyOf of schemas of different types, so that oneOf (exactly one) holds as well. */
        private ObjectNode anyOf(int depth) {
            List<ObjectNode> options = new ArrayList<>(List.of(string(), typed("integer"), typed("boolean"), typed("null"),
                    object(depth), array(depth)));
            java.util.Collections.shuffle(options, random);
            ArrayNode list = JSON.arrayNode();
            int n = 1 + random.nextInt(3);
            for (int i = 0; i < n; i++) list.add(options.get(i));
            return JSON.objectNode().set(random.nextBoolean() ? "anyOf" : "oneOf", list);
        }

        private ObjectNode reference(int depth) {
            String name = "d" + defs.size();
            defs.set(name, random.nextBoolean() ? object(depth) : string());
            return JSON.objectNode().put("$ref", "#/$defs/" + name);
        }
    }

    @Test
    void everythingARandomModelWritesUnderASchemaIsValidForIt() throws Exception {
        int[] prompt = tokenizer.encode("Answer in JSON:");
        int end = GrammarConstraintTest.IM_END;
        int outputs = 0;
        for (long seed = 1; seed <= OUTPUTS; seed++) {
            ObjectNode schemaJson = new Schemas(seed).root();
            Schema validator = VALIDATORS.getSchema(schemaJson.toString());
            Grammar grammar = Grammar.fromJsonSchema(schemaJson);
            Generator generator = new Generator(model.sequence(), new int[] {end}, new SamplingParams(1f, 0, 1f, 0f, 1f, seed * 7919));
            GrammarConstraint constraint = new GrammarConstraint(grammar, GrammarConstraintTest.VOCABULARY, new int[] {end});
            Generator.Generation g = generator.generate(prompt, 900, id -> {}, () -> false, constraint);
            String text = tokenizer.decode(g.ids(), false);
            assertEquals(StopReason.END_OF_SEQUENCE, g.stopReason(), "schema " + schemaJson + " wrote " + text);
            STRICT.readTree(text); // parses as one JSON value, nothing after it
            List<Error> errors = validator.validate(text, InputFormat.JSON);
            assertTrue(errors.isEmpty(), "schema " + schemaJson + "\noutput " + text + "\nerrors " + errors);
            outputs++;
        }
        assertEquals(OUTPUTS, outputs);
    }
}
