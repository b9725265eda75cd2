package fs.grammar;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A compiled grammar: every rule an automaton over code points whose moves may call other rules. Immutable and
 * thread-safe, to be shared by every request that uses it; the tables that speed up masking a vocabulary are built
 * as needed and kept with it.
 */
public final class Grammar {
    final String[] ruleNames;
    final int[] ruleStart;
    final int root;
    final boolean[] stateFinal;
    final int[][] stateEdges;
    final int[][] stateCalls; // pairs: called rule, state to return to
    final CodePointSet[] edgeSet;
    final int[] edgeTarget;
    private final GrammarState start;
    private final Map<TokenVocabulary, TokenMasks> masks = new ConcurrentHashMap<>();

    Grammar(String[] ruleNames, int[] ruleStart, int root, boolean[] stateFinal, int[][] stateEdges, int[][] stateCalls,
            CodePointSet[] edgeSet, int[] edgeTarget) {
        this.ruleNames = ruleNames;
        this.ruleStart = ruleStart;
        this.root = root;
        this.stateFinal = stateFinal;
        this.stateEdges = stateEdges;
        this.stateCalls = stateCalls;
        this.edgeSet = edgeSet;
        this.edgeTarget = edgeTarget;
        this.start = GrammarState.start(this);
    }

    /** A grammar in llama.cpp's GBNF, whose start rule is "root". */
    public static Grammar parse(String gbnf) {
        return GrammarCompiler.compile(GbnfParser.parse(gbnf));
    }

    /** The grammar of the JSON texts a JSON schema accepts (see {@link JsonSchemaGbnf} for what is supported). */
    public static Grammar fromJsonSchema(JsonNode schema) {
        return parse(JsonSchemaGbnf.toGbnf(schema));
    }

    /** Any JSON object: OpenAI's response_format "json_object". */
    public static Grammar anyJsonObject() {
        return AnyJsonObject.GRAMMAR;
    }

    /** Whether the whole of {@code text} (UTF-8) is in the grammar's language. */
    public boolean matches(byte[] text) {
        GrammarState s = start.advance(this, text);
        return s != null && s.canEnd;
    }

    /** Whether {@code text} (UTF-8) begins some text of the grammar's language. */
    public boolean matchesPrefix(byte[] text) {
        return start.advance(this, text) != null;
    }

    GrammarState start() {
        return start;
    }

    TokenMasks masks(TokenVocabulary vocabulary) {
        return masks.computeIfAbsent(vocabulary, v -> new TokenMasks(this, v));
    }

    private static final class AnyJsonObject {
        static final Grammar GRAMMAR = parse(JsonSchemaGbnf.anyObjectGbnf());
    }
}
