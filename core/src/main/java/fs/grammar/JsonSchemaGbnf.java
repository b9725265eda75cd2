package fs.grammar;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes the GBNF grammar of the JSON texts that a JSON schema accepts, for the part of JSON Schema that a grammar can
 * hold exactly: type, properties, required, additionalProperties, items, prefixItems, enum, const, anyOf, oneOf (of
 * options that cannot overlap), local $ref, minItems, maxItems, minLength, maxLength and the formats date, time,
 * date-time and uuid. Any other keyword that constrains values is refused by name, with its JSON pointer, rather than
 * silently not enforced; descriptive keywords are ignored. Properties come in the schema's order, the optional ones
 * possibly left out. Whitespace between tokens is bounded, so that a model cannot wander in it forever. An object
 * without additionalProperties gets only its declared properties.
 */
public final class JsonSchemaGbnf {
    private static final Set<String> DESCRIPTIVE = Set.of("title", "description", "default", "examples", "$schema", "$id",
            "$comment", "$defs", "definitions", "deprecated", "readOnly", "writeOnly");
    private static final Set<String> SUPPORTED = Set.of("type", "properties", "required", "additionalProperties", "items",
            "prefixItems", "enum", "const", "anyOf", "oneOf", "$ref", "minItems", "maxItems", "minLength", "maxLength",
            "format");
    private static final Set<String> FORMATS = Set.of("date", "time", "date-time", "uuid");
    private static final Set<String> TYPES = Set.of("string", "integer", "number", "boolean", "null", "object", "array");
    /** The most digits of an integer part, a fraction and an exponent: bounded, so a number always ends. */
    private static final int INTEGER_DIGITS = 16, FRACTION_DIGITS = 16, EXPONENT_DIGITS = 2;

    private JsonSchemaGbnf() {}

    /** A whole grammar whose start rule, "root", matches the JSON texts the schema accepts. */
    public static String toGbnf(JsonNode schema) {
        return rules(schema, "root");
    }

    /**
     * The rules for the schema: the start rule named {@code ruleName}, every other rule's name beginning with
     * {@code ruleName + "-"}, so that the rules of several schemas can be put together in one grammar.
     */
    public static String rules(JsonNode schema, String ruleName) {
        if (ruleName.isEmpty() || !ruleName.chars().allMatch(c -> Character.isLetterOrDigit(c) && c < 128 || c == '-' || c == '_')) {
            throw new IllegalArgumentException("rule name '" + ruleName + "' is not a GBNF name ([a-zA-Z0-9_-]+)");
        }
        return new Writer(schema, ruleName).write();
    }

    /** Any JSON object. */
    static String anyObjectGbnf() {
        Writer w = new Writer(null, "root");
        w.define("root", w.anyObject());
        return w.text();
    }

    private static final class Writer {
        private final JsonNode root;
        private final String prefix;
        private final Map<String, String> rules = new LinkedHashMap<>();
        private final Map<String, String> refRules = new HashMap<>();
        private final Map<String, Integer> counters = new HashMap<>();

        Writer(JsonNode root, String prefix) {
            this.root = root;
            this.prefix = prefix;
        }

        String write() {
            rules.put(prefix, null); // the start rule first
            define(prefix, value(root, ""));
            return text();
        }

        String text() {
            StringBuilder out = new StringBuilder();
            for (Map.Entry<String, String> rule : rules.entrySet()) {
                out.append(rule.getKey()).append(" ::= ").append(rule.getValue()).append('\n');
            }
            return out.toString();
        }

        void define(String name, String body) {
            rules.put(name, body);
        }

        /** A helper rule named after what it is, numbered when there are several. */
        private String newRule(String what) {
            int n = counters.merge(what, 1, Integer::sum);
            return prefix + "-" + what + (n == 1 ? "" : "-" + n);
        }

        /** A shared helper rule, defined once. */
        private String shared(String what, String body) {
            String name = prefix + "-" + what;
            if (!rules.containsKey(name)) {
                rules.put(name, null); // reserved first: the body may refer to itself
                rules.put(name, body);
            }
            return name;
        }

        private GrammarException error(String pointer, String message) {
            return new GrammarException("schema #" + pointer + ": " + message);
        }

        /** The expression of the JSON values {@code schema} (at {@code pointer}) accepts, without whitespace around. */
        private String value(JsonNode schema, String pointer) {
            if (schema == null || schema.isMissingNode()) return anyValue();
            if (schema.isBoolean()) {
                if (schema.booleanValue()) return anyValue();
                throw error(pointer, "schema false matches nothing");
            }
            if (!schema.isObject()) throw error(pointer, "a schema must be an object or a boolean");
            List<String> valueKeywords = new ArrayList<>();
            for (String keyword : (Iterable<String>) schema::fieldNames) {
                if (DESCRIPTIVE.contains(keyword)) continue;
                if (!SUPPORTED.contains(keyword)) throw error(pointer, "unsupported keyword '" + keyword + "'");
                valueKeywords.add(keyword);
            }
            if (schema.has("$ref")) {
                only(schema, pointer, "$ref", valueKeywords, Set.of());
                return ref(schema.get("$ref"), pointer + "/$ref");
            }
            if (schema.has("anyOf") || schema.has("oneOf")) {
                String keyword = schema.has("anyOf") ? "anyOf" : "oneOf";
                only(schema, pointer, keyword, valueKeywords, Set.of());
                JsonNode options = schema.get(keyword);
                if (!options.isArray() || options.isEmpty()) throw error(pointer + "/" + keyword, "must be a non-empty array");
                if (keyword.equals("oneOf")) checkDisjoint(options, pointer + "/oneOf");
                List<String> alternatives = new ArrayList<>();
                for (int i = 0; i < options.size(); i++) alternatives.add(value(options.get(i), pointer + "/" + keyword + "/" + i));
                return group(alternatives);
            }
            Set<String> types = types(schema, pointer);
            if (schema.has("const")) {
                only(schema, pointer, "const", valueKeywords, Set.of("type"));
                if (!types.isEmpty() && !types.contains(typeOf(schema.get("const")))) {
                    throw error(pointer + "/const", "the value is not of the schema's type");
                }
                return literal(schema.get("const").toString());
            }
            if (schema.has("enum")) {
                only(schema, pointer, "enum", valueKeywords, Set.of("type"));
                JsonNode values = schema.get("enum");
                if (!values.isArray() || values.isEmpty()) throw error(pointer + "/enum", "must be a non-empty array");
                List<String> alternatives = new ArrayList<>();
                for (JsonNode v : values) if (types.isEmpty() || types.contains(typeOf(v))) alternatives.add(literal(v.toString()));
                if (alternatives.isEmpty()) throw error(pointer + "/enum", "no value is of the schema's type");
                return group(alternatives);
            }
            if (types.isEmpty()) {
                if (has(schema, "properties", "required", "additionalProperties")) types.add("object");
                if (has(schema, "items", "prefixItems", "minItems", "maxItems")) types.add("array");
                if (has(schema, "minLength", "maxLength", "format")) types.add("string");
                if (types.isEmpty()) return anyValue();
            }
            List<String> alternatives = new ArrayList<>();
            for (String type : types) {
                alternatives.add(switch (type) {
                    case "string" -> string(schema, pointer);
                    case "integer" -> integer();
                    case "number" -> number();
                    case "boolean" -> shared("boolean", "\"true\" | \"false\"");
                    case "null" -> "\"null\"";
                    case "object" -> object(schema, pointer);
                    case "array" -> array(schema, pointer);
                    default -> throw new IllegalStateException(type);
                });
            }
            return group(alternatives);
        }

        /**
         * oneOf wants exactly one option to match, which a grammar of the options' union cannot hold where two options
         * can match the same value: so oneOf is taken where its options cannot overlap (different types, or distinct
         * const/enum values), and refused otherwise rather than weakened to anyOf.
         */
        private void checkDisjoint(JsonNode options, String pointer) {
            List<Matches> each = new ArrayList<>();
            for (int i = 0; i < options.size(); i++) each.add(matches(options.get(i), 0));
            for (int i = 0; i < each.size(); i++) {
                for (int j = i + 1; j < each.size(); j++) {
                    if (each.get(i).overlaps(each.get(j))) {
                        throw error(pointer, "options " + i + " and " + j + " may both match a value (oneOf is held only"
                                + " for options of different types or values; anyOf takes any options)");
                    }
                }
            }
        }

        /** What an option may match, coarsely: whole types, and exact values (const, enum). */
        private record Matches(boolean any, Set<String> types, Set<String> values, Set<String> valueTypes) {
            boolean overlaps(Matches o) {
                if (any || o.any) return true;
                for (String t : types) {
                    if (o.types.contains(t) || o.valueTypes.contains(t)) return true;
                    if (t.equals("number") && (o.types.contains("integer") || o.valueTypes.contains("integer"))) return true;
                }
                for (String t : o.types) {
                    if (valueTypes.contains(t) || (t.equals("number") && valueTypes.contains("integer"))) return true;
                }
                for (String v : values) if (o.values.contains(v)) return true;
                return false;
            }
        }

        private Matches matches(JsonNode schema, int depth) {
            Matches any = new Matches(true, Set.of(), Set.of(), Set.of());
            if (depth > 16 || !schema.isObject()) return any;
            if (schema.has("$ref") && schema.get("$ref").isTextual()) {
                return matches(root.at(schema.get("$ref").textValue().substring(1)), depth + 1);
            }
            Set<String> types = new LinkedHashSet<>(), values = new LinkedHashSet<>(), valueTypes = new LinkedHashSet<>();
            for (String keyword : List.of("anyOf", "oneOf")) {
                if (!schema.path(keyword).isArray()) continue;
                for (JsonNode option : schema.get(keyword)) {
                    Matches m = matches(option, depth + 1);
                    if (m.any) return any;
                    types.addAll(m.types);
                    values.addAll(m.values);
                    valueTypes.addAll(m.valueTypes);
                }
                return new Matches(false, types, values, valueTypes);
            }
            List<JsonNode> literals = new ArrayList<>();
            if (schema.has("const")) literals.add(schema.get("const"));
            else if (schema.path("enum").isArray()) schema.get("enum").forEach(literals::add);
            if (!literals.isEmpty()) {
                for (JsonNode v : literals) {
                    values.add(v.toString());
                    valueTypes.add(typeOf(v));
                }
                return new Matches(false, types, values, valueTypes);
            }
            JsonNode type = schema.get("type");
            if (type != null && type.isTextual()) types.add(type.textValue());
            else if (type != null && type.isArray()) type.forEach(t -> types.add(t.asText()));
            else if (has(schema, "properties", "required", "additionalProperties")) types.add("object");
            else if (has(schema, "items", "prefixItems", "minItems", "maxItems")) types.add("array");
            else if (has(schema, "minLength", "maxLength", "format")) types.add("string");
            else return any;
            return new Matches(false, types, values, valueTypes);
        }

        /** Refuses keywords beside {@code keyword} that this writer would otherwise leave unenforced. */
        private void only(JsonNode schema, String pointer, String keyword, List<String> valueKeywords, Set<String> allowed) {
            for (String other : valueKeywords) {
                if (!other.equals(keyword) && !allowed.contains(other)) {
                    throw error(pointer, "keyword '" + other + "' beside '" + keyword + "' is not supported");
                }
            }
        }

        private static boolean has(JsonNode schema, String... keywords) {
            for (String k : keywords) if (schema.has(k)) return true;
            return false;
        }

        private Set<String> types(JsonNode schema, String pointer) {
            Set<String> types = new LinkedHashSet<>();
            JsonNode type = schema.get("type");
            if (type == null) return types;
            List<JsonNode> names = new ArrayList<>();
            if (type.isArray()) type.forEach(names::add);
            else names.add(type);
            for (JsonNode name : names) {
                if (!name.isTextual() || !TYPES.contains(name.textValue())) {
                    throw error(pointer + "/type", "unknown type " + name);
                }
                types.add(name.textValue());
            }
            if (types.isEmpty()) throw error(pointer + "/type", "no type given");
            return types;
        }

        private static String typeOf(JsonNode v) {
            if (v.isTextual()) return "string";
            if (v.isIntegralNumber()) return "integer";
            if (v.isNumber()) return "number";
            if (v.isBoolean()) return "boolean";
            if (v.isNull()) return "null";
            if (v.isObject()) return "object";
            return "array";
        }

        private String ref(JsonNode ref, String pointer) {
            if (!ref.isTextual()) throw error(pointer, "must be a string");
            String target = ref.textValue();
            if (!target.equals("#") && !target.startsWith("#/$defs/") && !target.startsWith("#/definitions/")) {
                throw error(pointer, "unsupported $ref '" + target + "' (only local ones: #/$defs/... or #/definitions/...)");
            }
            String existing = refRules.get(target);
            if (existing != null) return existing;
            JsonNode node = root.at(target.substring(1));
            if (node.isMissingNode()) throw error(pointer, "$ref '" + target + "' points at nothing");
            String name = newRule("ref-" + target.substring(target.lastIndexOf('/') + 1).replaceAll("[^a-zA-Z0-9-]", "-"));
            refRules.put(target, name);
            rules.put(name, null); // reserved: the definition may refer to itself
            rules.put(name, value(node, target.substring(1)));
            return name;
        }

        private String object(JsonNode schema, String pointer) {
            JsonNode properties = schema.path("properties");
            if (!properties.isMissingNode() && !properties.isObject()) throw error(pointer + "/properties", "must be an object");
            Set<String> required = new LinkedHashSet<>();
            JsonNode req = schema.path("required");
            if (!req.isMissingNode()) {
                if (!req.isArray()) throw error(pointer + "/required", "must be an array");
                for (JsonNode r : req) {
                    if (!r.isTextual()) throw error(pointer + "/required", "must hold strings");
                    required.add(r.textValue());
                }
            }
            List<String> names = new ArrayList<>();
            List<String> pairs = new ArrayList<>();
            for (String name : (Iterable<String>) properties::fieldNames) {
                names.add(name);
                pairs.add(pair(name, value(properties.get(name), pointer + "/properties/" + escape(name))));
            }
            for (String name : required) {
                if (!names.contains(name)) {
                    names.add(name);
                    pairs.add(pair(name, anyValue()));
                }
            }
            JsonNode additional = schema.path("additionalProperties");
            String extra = null;
            if (!additional.isMissingNode() && !(additional.isBoolean() && !additional.booleanValue())) {
                extra = string(null, pointer) + " " + space() + " \":\" " + space() + " "
                        + value(additional, pointer + "/additionalProperties") + " " + space();
            }
            String obj = newRule("object");
            // first(i): properties i.. when none has been written yet; rest(i): after one has (each needs a comma).
            String restTail = extra == null ? "" : "( \",\" " + space() + " " + extra + " )*";
            String firstTail = extra == null ? "" : "( " + extra + " " + restTail + " )?";
            String rest = restTail, first = firstTail;
            for (int i = names.size() - 1; i >= 0; i--) {
                String restRule = obj + "-rest-" + i, firstRule = obj + "-first-" + i;
                boolean isRequired = required.contains(names.get(i));
                String comma = "\",\" " + space() + " " + pairs.get(i);
                define(restRule, isRequired ? comma + " " + rest : "( " + comma + " )? " + rest);
                String own = pairs.get(i) + " " + rest;
                define(firstRule, isRequired ? own : first.isEmpty() ? "( " + own + " )?" : own + " | " + first);
                rest = restRule;
                first = firstRule;
            }
            define(obj, "\"{\" " + space() + " " + first + " \"}\"");
            return obj;
        }

        private String pair(String name, String value) {
            return literal(quote(name)) + " " + space() + " \":\" " + space() + " " + value + " " + space();
        }

        private String array(JsonNode schema, String pointer) {
            int min = count(schema, "minItems", pointer, 0);
            int max = count(schema, "maxItems", pointer, -1);
            if (max >= 0 && max < min) throw error(pointer + "/maxItems", "is below minItems");
            List<String> prefixItems = new ArrayList<>();
            JsonNode prefixNode = schema.path("prefixItems");
            if (!prefixNode.isMissingNode()) {
                if (!prefixNode.isArray()) throw error(pointer + "/prefixItems", "must be an array");
                for (int i = 0; i < prefixNode.size(); i++) prefixItems.add(value(prefixNode.get(i), pointer + "/prefixItems/" + i));
            }
            JsonNode items = schema.path("items");
            String extra;
            if (items.isBoolean() && !items.booleanValue()) extra = null;
            else if (!items.isMissingNode()) extra = value(items, pointer + "/items");
            else extra = anyValue();
            int fixed = max < 0 ? prefixItems.size() : Math.min(prefixItems.size(), max);
            int extraMin = Math.max(0, min - fixed);
            // Beyond a tuple, without an items schema, only as many more as minItems needs.
            int extraMax = extra == null ? 0 : !items.isMissingNode() || prefixItems.isEmpty() ? (max < 0 ? -1 : max - fixed) : extraMin;
            if (extra == null && extraMin > 0) throw error(pointer + "/minItems", "needs more items than items:false allows");
            String item = extra == null ? null : extra + " " + space();
            StringBuilder body = new StringBuilder("\"[\" " + space() + " ");
            String comma = "\",\" " + space() + " ";
            if (fixed > 0) {
                for (int i = 0; i < fixed; i++) body.append(i == 0 ? "" : comma).append(prefixItems.get(i)).append(' ').append(space()).append(' ');
                if (extraMax != 0) body.append(repeat("( " + comma + item + " )", extraMin, extraMax)).append(' ');
            } else if (extraMax != 0) {
                String list = item + " " + repeat("( " + comma + item + " )", Math.max(0, extraMin - 1), extraMax < 0 ? -1 : extraMax - 1);
                body.append(extraMin == 0 ? "( " + list + " )? " : list + " ");
            }
            body.append("\"]\"");
            String name = newRule("array");
            define(name, body.toString());
            return name;
        }

        private static String repeat(String item, int min, int max) {
            if (max == 0) return "";
            if (max < 0) return min == 0 ? item + "*" : min == 1 ? item + "+" : item + "{" + min + ",}";
            if (min == 0 && max == 1) return item + "?";
            return min == max ? item + "{" + min + "}" : item + "{" + min + "," + max + "}";
        }

        private int count(JsonNode schema, String keyword, String pointer, int absent) {
            JsonNode n = schema.get(keyword);
            if (n == null) return absent;
            if (!n.canConvertToInt() || !n.isIntegralNumber() || n.intValue() < 0) {
                throw error(pointer + "/" + keyword, "must be a non-negative integer");
            }
            if (n.intValue() > GbnfParser.MAX_REPETITION) throw error(pointer + "/" + keyword, "over " + GbnfParser.MAX_REPETITION);
            return n.intValue();
        }

        private String string(JsonNode schema, String pointer) {
            if (schema != null && schema.has("format")) {
                JsonNode format = schema.get("format");
                if (!format.isTextual() || !FORMATS.contains(format.textValue())) {
                    throw error(pointer + "/format", "unsupported format " + format);
                }
                if (has(schema, "minLength", "maxLength")) {
                    throw error(pointer, "minLength or maxLength beside 'format' is not supported");
                }
                return "\"\\\"\" " + format(format.textValue()) + " \"\\\"\"";
            }
            int min = schema == null ? 0 : count(schema, "minLength", pointer, 0);
            int max = schema == null ? -1 : count(schema, "maxLength", pointer, -1);
            if (max >= 0 && max < min) throw error(pointer + "/maxLength", "is below minLength");
            if (min == 0 && max < 0) return shared("string", "\"\\\"\" " + character() + "* \"\\\"\"");
            return shared("string-" + min + "-" + (max < 0 ? "" : max),
                    "\"\\\"\" " + repeat(character(), min, max) + " \"\\\"\"");
        }

        /** One character of a JSON string: any but the quote, the backslash and controls, or an escape. */
        private String character() {
            String hex = shared("hex", "[0-9a-fA-F]");
            // \\u escapes of surrogates are left out: a pair would be one character to a validator, two here.
            return shared("char", "[^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" ( [0-9a-cA-CefEF] "
                    + hex + " | [dD] [0-7] ) " + hex + " " + hex + " )");
        }

        private String format(String format) {
            return switch (format) {
                case "date" -> date();
                case "time" -> time();
                case "date-time" -> shared("date-time", date() + " \"T\" " + time());
                case "uuid" -> shared("uuid", "[0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12}");
                default -> throw new IllegalStateException(format);
            };
        }

        /** A calendar date; February stops at the 28th, as whether the 29th exists depends on the year. */
        private String date() {
            return shared("date", "[0-9]{4} \"-\" ( \"02-\" ( \"0\" [1-9] | \"1\" [0-9] | \"2\" [0-8] )"
                    + " | ( \"0\" [13578] | \"1\" [02] ) \"-\" ( \"0\" [1-9] | [12] [0-9] | \"3\" [01] )"
                    + " | ( \"0\" [469] | \"11\" ) \"-\" ( \"0\" [1-9] | [12] [0-9] | \"30\" ) )");
        }

        private String time() {
            return shared("time", "( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{1,9} )?"
                    + " ( \"Z\" | [+-] ( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] )");
        }

        private String integer() {
            return shared("integer", "\"-\"? ( \"0\" | [1-9] [0-9]{0," + (INTEGER_DIGITS - 1) + "} )");
        }

        private String number() {
            return shared("number", integer() + " ( \".\" [0-9]{1," + FRACTION_DIGITS + "} )? ( [eE] [-+]? [0-9]{1,"
                    + EXPONENT_DIGITS + "} )?");
        }

        private String space() {
            return shared("space", "( \" \" | \"\\n\" [ \\t]{0,20} )?");
        }

        private String anyValue() {
            String value = prefix + "-value";
            if (!rules.containsKey(value)) {
                rules.put(value, null);
                rules.put(value, anyObject() + " | " + anyArray() + " | " + string(null, "") + " | " + number()
                        + " | \"true\" | \"false\" | \"null\"");
            }
            return value;
        }

        String anyObject() {
            String name = prefix + "-any-object";
            if (!rules.containsKey(name)) {
                rules.put(name, null);
                String pair = string(null, "") + " " + space() + " \":\" " + space() + " " + anyValue() + " " + space();
                rules.put(name, "\"{\" " + space() + " ( " + pair + " ( \",\" " + space() + " " + pair + " )* )? \"}\"");
            }
            return name;
        }

        private String anyArray() {
            String name = prefix + "-any-array";
            if (!rules.containsKey(name)) {
                rules.put(name, null);
                String item = anyValue() + " " + space();
                rules.put(name, "\"[\" " + space() + " ( " + item + " ( \",\" " + space() + " " + item + " )* )? \"]\"");
            }
            return name;
        }

        private static String group(List<String> alternatives) {
            return alternatives.size() == 1 ? alternatives.getFirst() : "( " + String.join(" | ", alternatives) + " )";
        }

        /** JSON text as a JSON string literal. */
        private static String quote(String s) {
            return new com.fasterxml.jackson.databind.node.TextNode(s).toString();
        }

        /** A GBNF literal matching exactly {@code text}. */
        private static String literal(String text) {
            StringBuilder out = new StringBuilder("\"");
            text.codePoints().forEach(c -> {
                if (c == '"' || c == '\\') out.append('\\').appendCodePoint(c);
                else if (c == '\n') out.append("\\n");
                else if (c < 0x20 || c == 0x7F) out.append(String.format("\\x%02X", c));
                else out.appendCodePoint(c);
            });
            return out.append('"').toString();
        }

        private static String escape(String name) {
            return name.replace("~", "~0").replace("/", "~1");
        }
    }
}
