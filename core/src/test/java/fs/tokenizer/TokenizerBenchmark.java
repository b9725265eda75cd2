package fs.tokenizer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Load time and encode/decode throughput of the Qwen3 tokenizer; a main(), not a test. Run after
 * {@code mvn -pl core -am test-compile}:
 * <pre>
 * java -cp core/target/test-classes:core/target/classes:$(cat cp.txt) fs.tokenizer.TokenizerBenchmark [MODEL_DIR]
 * </pre>
 * The first load is the cold-JVM figure (class loading, interpretation and C2 compiling on the other core included);
 * encoding runs on ~1 MB of mixed text (the golden texts of every category: English, code, CJK, emoji, ... in a
 * shuffled order with random numbers). The warm figures come after 20 unmeasured passes.
 */
public final class TokenizerBenchmark {
    public static void main(String[] args) {
        Path dir = args.length > 0 ? Path.of(args[0]) : Qwen3Files.dir();
        long start = System.nanoTime();
        Tokenizer tokenizer = Tokenizer.load(dir);
        double coldLoad = seconds(start);
        double warmLoad = Double.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            long t = System.nanoTime();
            Tokenizer.load(dir);
            warmLoad = Math.min(warmLoad, seconds(t));
        }
        System.out.printf("load: cold %.3f s, warm (best of 5) %.3f s%n", coldLoad, warmLoad);

        String text = mixedText(1 << 20);
        double megabytes = text.getBytes(StandardCharsets.UTF_8).length / 1e6;
        long t = System.nanoTime();
        int[] ids = tokenizer.encode(text);
        System.out.printf("encode, first pass (cold cache and JIT): %.2f MB/s, %d tokens%n", megabytes / seconds(t), ids.length);
        for (int i = 0; i < 20; i++) tokenizer.encode(text); // let C2 compile the hot loops
        double best = 0;
        for (int i = 0; i < 5; i++) {
            t = System.nanoTime();
            tokenizer.encode(text);
            best = Math.max(best, megabytes / seconds(t));
        }
        System.out.printf("encode, best of 5 (warm): %.2f MB/s (%.0f tokens/s)%n", best, best * ids.length / megabytes);
        // The pre-token cache is per tokenizer: a fresh one shows encoding without cached words.
        Tokenizer fresh = Tokenizer.load(dir);
        t = System.nanoTime();
        fresh.encode(text);
        System.out.printf("encode, empty cache (JIT warm): %.2f MB/s%n", megabytes / seconds(t));

        for (int i = 0; i < 20; i++) tokenizer.decode(ids, false);
        double bestDecode = 0;
        for (int i = 0; i < 5; i++) {
            t = System.nanoTime();
            tokenizer.decode(ids, false);
            bestDecode = Math.max(bestDecode, megabytes / seconds(t));
        }
        System.out.printf("decode, best of 5: %.2f MB/s%n", bestDecode);
    }

    private static String mixedText(int bytes) {
        List<String> samples = Qwen3Files.jsonLines("qwen3_tokenizer_golden.jsonl").stream()
                .map(golden -> golden.get("text").asText()).toList();
        SplittableRandom random = new SplittableRandom(7);
        StringBuilder text = new StringBuilder();
        int length = 0;
        while (length < bytes) {
            String sample = samples.get(random.nextInt(samples.size()));
            text.append(sample).append(random.nextBoolean() ? " " : "\n").append(random.nextInt(1_000_000)).append(' ');
            length += sample.getBytes(StandardCharsets.UTF_8).length + 8;
        }
        return text.toString();
    }

    private static double seconds(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    private TokenizerBenchmark() {}
}
