package fs.grammar;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
    /** The most states kept as one object each (with their transitions); beyond it new ones are computed each time. */
    private static final int MAX_INTERNED_STATES = 32_768;
    /** The grammars last parsed, by their text, most recent last. */
    private static final Map<String, Grammar> RECENT = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Grammar> eldest) {
            return size() > 8;
        }
    };

    private final GrammarState start;
    private final Map<GrammarState, GrammarState> interned = new ConcurrentHashMap<>();
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
        this.start = intern(GrammarState.start(this));
    }

    /**
     * A grammar in llama.cpp's GBNF, whose start rule is "root". The same text gives the same grammar, while it is
     * among the last few used: requests that send the same schema or tools share its tables, which a new grammar
     * builds as it is first walked.
     */
    public static Grammar parse(String gbnf) {
        synchronized (RECENT) {
            Grammar known = RECENT.get(gbnf);
            if (known != null) return known;
        }
        Grammar compiled = GrammarCompiler.compile(GbnfParser.parse(gbnf));
        synchronized (RECENT) {
            Grammar raced = RECENT.putIfAbsent(gbnf, compiled);
            return raced != null ? raced : compiled;
        }
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
        return next(start, text).canEnd;
    }

    /** Whether {@code text} (UTF-8) begins some text of the grammar's language. */
    public boolean matchesPrefix(byte[] text) {
        return !next(start, text).isDead();
    }

    GrammarState start() {
        return start;
    }

    /** The state after byte {@code b} in state {@code s}: {@link GrammarState#DEAD} if {@code b} cannot come next. */
    GrammarState next(GrammarState s, int b) {
        GrammarState[] table = s.next;
        if (table != null) return table[b];
        if (s.heads.length == 0) return GrammarState.DEAD;
        if (interned.size() >= MAX_INTERNED_STATES) return intern(s.advance(this, outcomes(s, b)));
        s.next = table = transitions(s);
        return table[b];
    }

    /**
     * The states after each of the 256 bytes, computed once for each distinct way the bytes act on the state's heads
     * (a handful: the bytes of a class act alike), so that a state's table costs a few expansions, not 256.
     */
    private GrammarState[] transitions(GrammarState s) {
        GrammarState[] table = new GrammarState[256];
        Map<OutcomeKey, GrammarState> byOutcome = new HashMap<>();
        for (int b = 0; b < 256; b++) {
            int[] outcomes = outcomes(s, b);
            boolean dies = true;
            for (int o : outcomes) dies &= o == GrammarState.DIES;
            table[b] = dies ? GrammarState.DEAD
                    : byOutcome.computeIfAbsent(new OutcomeKey(outcomes), key -> intern(s.advance(this, key.outcomes)));
        }
        return table;
    }

    private int[] outcomes(GrammarState s, int b) {
        int[] outcomes = new int[s.heads.length];
        for (int i = 0; i < outcomes.length; i++) outcomes[i] = GrammarState.outcome(this, s.heads[i], b);
        return outcomes;
    }

    private record OutcomeKey(int[] outcomes) {
        @Override
        public boolean equals(Object o) {
            return o instanceof OutcomeKey k && Arrays.equals(k.outcomes, outcomes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(outcomes);
        }
    }

    /** The state after all of {@code bytes}: {@link GrammarState#DEAD} unless they may come next. */
    GrammarState next(GrammarState s, byte[] bytes) {
        for (int i = 0; i < bytes.length && s != GrammarState.DEAD; i++) s = next(s, bytes[i] & 0xFF);
        return s;
    }

    /** The one object of the states equal to {@code s} (or {@code s} itself once the bound of states is reached). */
    GrammarState intern(GrammarState s) {
        if (s == GrammarState.DEAD) return s;
        GrammarState known = interned.get(s);
        if (known != null) return known;
        if (interned.size() >= MAX_INTERNED_STATES) return s;
        known = interned.putIfAbsent(s, s);
        return known != null ? known : s;
    }

    TokenMasks masks(TokenVocabulary vocabulary) {
        return masks.computeIfAbsent(vocabulary, v -> new TokenMasks(this, v));
    }

    private static final class AnyJsonObject {
        static final Grammar GRAMMAR = parse(JsonSchemaGbnf.anyObjectGbnf());
    }
}
