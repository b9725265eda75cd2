package fs.tokenizer;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import fs.fuzz.FuzzCampaign;
import fs.fuzz.Mutator;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fuzz targets for the tokenizer's two loaders: tokenizer.json, and the binary tables {@link TokenizerCache} keeps. A
 * tokenizer that loads must also encode and decode without breaking the contract: tables that load but index out of
 * bounds later are no better than a crash at load. See docs/RELIABILITY.md.
 */
class TokenizerFuzzTest {
    private static final int CI_TRIES = 1_000;
    /** Added tokens, byte-level fallbacks, normalization and several pre-tokens, in one short text. */
    private static final String SAMPLE = "Hello, world! 123 <|im_start|>user\nçé 漢字 🙂<|im_end|>";
    /** Values that sizes, counts, ids and offsets in a binary table tend to be mishandled at. */
    private static final int[] INTERESTING_INTS = {
        0, 1, -1, 2, 3, 4, 255, 256, 257, 0x7FFF, 0xFFFF, 0x10000, 1 << 20, 1 << 30, Integer.MAX_VALUE, Integer.MIN_VALUE
    };

    @TempDir
    Path dir;

    @Test
    void tokenizerJson() {
        Path file = dir.resolve("tokenizer.json");
        TokenizerCache noCache = new TokenizerCache(null);
        FuzzCampaign.runAndCheck(new FuzzCampaign.Target("tokenizer.json", "tokenizer.json",
                new Mutator(List.of(seed())), input -> {
                    Files.write(file, input);
                    exercise(Tokenizer.load(dir, noCache));
                }), CI_TRIES);
    }

    /**
     * A cache file must be used, or ignored and rebuilt: never an exception. Half the inputs fix up the checksum after
     * mutating the tables, as a file written by a buggy or hostile program would have it, so that they reach the
     * tables' own checks rather than stopping at the checksum.
     */
    @Test
    void tokenizerCacheFile() throws IOException {
        Path model = Files.createDirectories(dir.resolve("model"));
        Path json = Files.write(model.resolve("tokenizer.json"), seed());
        TokenizerCache cache = new TokenizerCache(dir.resolve("cache"));
        cache.read(json);
        Path cacheFile = cache.cacheFile(json);
        byte[] valid = Files.readAllBytes(cacheFile);
        int bodyStart = CacheFileBytes.bodyStart(valid);
        assertNotNull(cache.cached(json), "the seed's cache file is used");
        Mutator blind = new Mutator(List.of(valid));
        Mutator body = new Mutator(List.of(Arrays.copyOfRange(valid, bodyStart, valid.length)));
        FuzzCampaign.Inputs inputs = (SplittableRandom random) -> {
            if (random.nextBoolean()) return blind.next(random);
            byte[] tables = random.nextBoolean() ? body.next(random) : withInterestingInt(valid, bodyStart, random);
            return CacheFileBytes.withTables(valid, tables);
        };
        AtomicLong used = new AtomicLong();
        FuzzCampaign.Figures figures = FuzzCampaign.runAndCheck(new FuzzCampaign.Target("tokenizer cache", "tokenizer.json", inputs, input -> {
            Files.write(cacheFile, input);
            TokenizerData data = cache.cached(json);
            if (data != null) {
                used.incrementAndGet();
                exercise(new Tokenizer(data));
            }
        }), CI_TRIES);
        // "Loaded" above counts files used and files ignored alike: both keep the promise.
        System.out.printf("fuzz tokenizer cache: %,d of the %,d files used, the rest ignored%n", used.get(), figures.inputs());
    }

    private static void exercise(Tokenizer tokenizer) {
        int[] ids = tokenizer.encode(SAMPLE);
        tokenizer.decode(ids, false);
        tokenizer.decode(ids, true);
    }

    private static byte[] withInterestingInt(byte[] valid, int bodyStart, SplittableRandom random) {
        byte[] tables = Arrays.copyOfRange(valid, bodyStart, valid.length);
        if (tables.length >= 4) {
            ByteBuffer.wrap(tables).putInt(random.nextInt(tables.length - 3), INTERESTING_INTS[random.nextInt(INTERESTING_INTS.length)]);
        }
        return tables;
    }

    /** A 400-token cut of Qwen3's tokenizer.json, with its added tokens, normalizer and pre-tokenizer. */
    static byte[] seed() {
        try (InputStream in = TokenizerFuzzTest.class.getResourceAsStream("/fuzz/tokenizer.json")) {
            if (in == null) throw new IllegalStateException("no seed /fuzz/tokenizer.json");
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
