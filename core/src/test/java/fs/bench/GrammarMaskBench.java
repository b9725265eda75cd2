package fs.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import fs.grammar.Grammar;
import fs.grammar.GrammarConstraint;
import fs.grammar.TokenVocabulary;
import fs.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * How long GrammarConstraint.mask takes on Qwen3's vocabulary (151,936 logits), for a nested JSON schema and for an
 * arithmetic GBNF grammar: sequences of random allowed tokens (as a random model would pick them), every mask call
 * timed. The first sequence of a grammar builds its tables; the figures of the later ones are what a server sees once
 * a grammar has been used. Wall time and the thread's CPU time (the same on a quiet machine; on a shared one, the
 * CPU time is what the code costs). Run: java -cp ... fs.bench.GrammarMaskBench [modelDir] (default
 * models/tiny-tied).
 */
public final class GrammarMaskBench {
    private static final String SCHEMA = """
            {"type": "object", "properties": {
              "id": {"type": "integer"},
              "name": {"type": "string", "maxLength": 24},
              "price": {"type": "number"},
              "tags": {"type": "array", "items": {"type": "string", "maxLength": 10}, "maxItems": 4},
              "owner": {"type": "object", "properties": {
                 "email": {"type": "string", "maxLength": 30},
                 "since": {"type": "string", "format": "date"},
                 "roles": {"type": "array", "items": {"enum": ["admin", "user", "guest"]}, "maxItems": 3}},
                 "required": ["email"]},
              "status": {"anyOf": [{"type": "null"}, {"enum": ["active", "retired"]}]}},
             "required": ["id", "name", "owner"]}""";

    private static final String ARITHMETIC = """
            root   ::= expr
            expr   ::= term ( ws [-+] ws term )*
            term   ::= factor ( ws [*/] ws factor )*
            factor ::= number | "(" ws expr ws ")"
            number ::= [0-9]{1,8} ( "." [0-9]{1,4} )?
            ws     ::= " "?
            """;

    private GrammarMaskBench() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : "models/tiny-tied");
        Tokenizer tokenizer = Tokenizer.load(dir);
        long t0 = System.nanoTime();
        TokenVocabulary vocabulary = TokenVocabulary.of(tokenizer);
        System.out.printf("vocabulary and trie: %.0f ms%n", (System.nanoTime() - t0) / 1e6);
        int end = tokenizer.tokenId("<|im_end|>").orElseThrow();
        run("nested JSON schema", Grammar.fromJsonSchema(new ObjectMapper().readTree(SCHEMA)), vocabulary, end, 120);
        run("arithmetic GBNF", Grammar.parse(ARITHMETIC), vocabulary, end, 60);
    }

    private static void run(String name, Grammar grammar, TokenVocabulary vocabulary, int end, int maxTokens) {
        float[] logits = new float[151_936];
        List<Long> cold = new ArrayList<>(), warm = new ArrayList<>(), coldCpu = new ArrayList<>(), warmCpu = new ArrayList<>();
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        Random random = new Random(42);
        for (int sequence = 0; sequence < 41; sequence++) {
            GrammarConstraint c = new GrammarConstraint(grammar, vocabulary, new int[] {end});
            for (int step = 0; step < maxTokens; step++) {
                Arrays.fill(logits, 0f);
                long cpu = threads.getCurrentThreadCpuTime();
                long start = System.nanoTime();
                c.mask(logits);
                (sequence == 0 ? cold : warm).add(System.nanoTime() - start);
                (sequence == 0 ? coldCpu : warmCpu).add(threads.getCurrentThreadCpuTime() - cpu);
                int[] allowed = new int[logits.length];
                int n = 0;
                for (int i = 0; i < logits.length; i++) if (logits[i] == 0f) allowed[n++] = i;
                // Ending as soon as the grammar allows it, half the time: sequences of mixed lengths.
                boolean mayEnd = false;
                for (int i = 0; i < n; i++) mayEnd |= allowed[i] == end;
                int pick = mayEnd && random.nextBoolean() ? end : allowed[random.nextInt(n)];
                if (pick == end) break;
                c.accept(pick);
            }
        }
        System.out.printf("%s, wall: first sequence %s; next 40 sequences %s%n", name, stats(cold), stats(warm));
        System.out.printf("%s, CPU:  first sequence %s; next 40 sequences %s%n", name, stats(coldCpu), stats(warmCpu));
    }

    private static String stats(List<Long> nanos) {
        long[] sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        return String.format("%d masks, median %.3f ms, p99 %.3f ms, max %.1f ms", sorted.length,
                sorted[sorted.length / 2] / 1e6, sorted[(int) (sorted.length * 0.99)] / 1e6, sorted[sorted.length - 1] / 1e6);
    }
}
