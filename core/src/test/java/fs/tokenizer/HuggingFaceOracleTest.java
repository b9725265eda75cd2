package fs.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hugging Face's own tokenizer (the Rust library through DJL, offline, natives from its jar) as the oracle: thousands
 * of generated texts must encode to the same ids and random ids must decode to the same text. Seeded, so a failure
 * reproduces; the failing text is printed with its code points.
 */
class HuggingFaceOracleTest {
    private static final long SEED = 20261130L;
    private static HuggingFaceTokenizer oracle;
    private final Tokenizer tokenizer = Qwen3Files.tokenizer();

    @BeforeAll
    static void loadOracle() throws Exception {
        // Keep DJL off the network and out of the home directory: the native library comes out of its jar.
        System.setProperty("ai.djl.offline", "true");
        System.setProperty("ENGINE_CACHE_DIR", Path.of(System.getProperty("fs.repo"), "core", "target", "djl-cache").toString());
        oracle = HuggingFaceTokenizer.builder()
                .optTokenizerPath(Qwen3Files.dir().resolve("tokenizer.json"))
                .optAddSpecialTokens(false)
                .optTruncation(false)
                .optPadding(false)
                .build();
    }

    @AfterAll
    static void closeOracle() {
        if (oracle != null) oracle.close();
    }

    @Test
    void whitespaceCharactersSplitAsTheOracleSplitsThem() {
        // Java's \s must be Oniguruma's: every Unicode White_Space character, no more.
        List<String> texts = new ArrayList<>();
        for (char c = 0; c < 0x3100; c++) {
            if (!Character.isSurrogate(c)) texts.add("a" + c + c + "b " + c + "\n" + c + "'s" + c);
        }
        assertSameIds(texts);
    }

    @Test
    void generatedTextsEncodeAsTheOracle() {
        SplittableRandom random = new SplittableRandom(SEED);
        TextGenerator generator = new TextGenerator(random);
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < 4000; i++) texts.add(generator.text(1 + random.nextInt(40)));
        for (int i = 0; i < 20; i++) texts.add(generator.text(2000));
        // Long runs: BPE over one long word, and the split pattern's backtracking alternatives.
        texts.addAll(List.of("ab".repeat(5000), "a".repeat(10_000), " ".repeat(5000) + "x", "1".repeat(3000),
                "\n\r ".repeat(1000) + "y", "!?".repeat(3000) + "\n\n", "日本".repeat(3000)));
        assertSameIds(texts);
    }

    @Test
    void randomIdsDecodeAsTheOracle() {
        SplittableRandom random = new SplittableRandom(SEED + 1);
        for (int i = 0; i < 3000; i++) {
            int[] ids = new int[1 + random.nextInt(12)];
            for (int k = 0; k < ids.length; k++) {
                ids[k] = random.nextInt(8) == 0 ? 151643 + random.nextInt(26) : random.nextInt(tokenizer.vocabSize());
            }
            long[] longIds = Arrays.stream(ids).asLongStream().toArray();
            for (boolean skipSpecial : new boolean[] {false, true}) {
                assertEquals(oracle.decode(longIds, skipSpecial), tokenizer.decode(ids, skipSpecial),
                        "decode " + Arrays.toString(ids) + " skipSpecial=" + skipSpecial);
            }
            StreamingDecoder stream = tokenizer.streamingDecoder();
            StringBuilder streamed = new StringBuilder();
            for (int id : ids) streamed.append(stream.push(id));
            streamed.append(stream.flush());
            assertEquals(tokenizer.decode(ids, false), streamed.toString(), "streamed " + Arrays.toString(ids));
        }
    }

    /** Encodes in one batch: the oracle costs far more per call than per character. */
    private void assertSameIds(List<String> texts) {
        Encoding[] expected = oracle.batchEncode(texts, false, false);
        for (int i = 0; i < texts.size(); i++) {
            int[] actual = tokenizer.encode(texts.get(i));
            if (!Arrays.equals(Arrays.stream(actual).asLongStream().toArray(), expected[i].getIds())) {
                fail("encode differs from Hugging Face for " + describe(texts.get(i)) + "\n expected "
                        + Arrays.toString(expected[i].getIds()) + "\n actual   " + Arrays.toString(actual));
            }
        }
    }

    private static String describe(String text) {
        StringBuilder codePoints = new StringBuilder();
        text.codePoints().forEach(cp -> codePoints.append(String.format(" U+%04X", cp)));
        return "\"" + text + "\" (" + codePoints.toString().trim() + ")";
    }

    /** Random text from pieces that stress the regex, the normalizer, BPE and the added-token matcher. */
    private static final class TextGenerator {
        private static final String[] WHITESPACE = {
            " ", "  ", "\t", "\n", "\r", "\r\n", "\n\n", "\u00A0", "\u3000", "\u0085", "\u2028", "\u2029", "\u000B",
            "\u000C", "\u1680", "\u2003", "\u200A", "\u202F", "\u205F", "\u200B", "\uFEFF", "\u180E", " \n ", "\r\r\n"
        };
        private static final String[] WORDS = {
            "hello", "World", "the", "tokenizer", "Qwen", "naïve", "café", "straße", "İstanbul", "ǅ", "ﬁne",
            "日本語", "中文字符", "한국어", "Привет", "мир", "مرحبا", "שלום", "नमस्ते", "ภาษาไทย", "Ελληνικά", "ĳ"
        };
        private static final String[] APOSTROPHES = {
            "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'LL", "'D", "'ſ", "'K", "'x", "’s", "''"
        };
        private static final String[] ADDED = {
            "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
            "<|im_", "<think", "</think", "|>", "<|", "<|fim_prefix|>", "<tool_response>"
        };
        private static final String PUNCTUATION = "!?.,;:-_(){}[]<>/\\|@#$%^&*+=~`\"'«»¿¡…—";
        private static final String[] EMOJI = {
            "😀", "👍🏽", "👨‍👩‍👧", "🏳️‍🌈", "❤️", "🦙", "🇫🇷", "☃", "✔︎", "🧑🏿‍🚀"
        };
        private static final Map<Integer, int[]> RANGES = Map.of(
                0, new int[] {0x20, 0x7F}, 1, new int[] {0xA0, 0x250}, 2, new int[] {0x300, 0x370},
                3, new int[] {0x4E00, 0x9FA0}, 4, new int[] {0xAC00, 0xD7A4}, 5, new int[] {0x1100, 0x1200},
                6, new int[] {0x1F300, 0x1FA00}, 7, new int[] {0x2000, 0x2070}, 8, new int[] {0x0600, 0x0700},
                9, new int[] {0x0900, 0x0980});
        private final SplittableRandom random;

        TextGenerator(SplittableRandom random) {
            this.random = random;
        }

        String text(int pieces) {
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < pieces; i++) {
                switch (random.nextInt(12)) {
                    case 0, 1 -> text.append(pick(WHITESPACE));
                    case 2, 3 -> text.append(pick(WORDS));
                    case 4 -> text.append(pick(APOSTROPHES));
                    case 5 -> text.append(pick(ADDED));
                    case 6 -> text.append(pick(EMOJI));
                    case 7 -> text.append(random.nextInt(100_000));
                    case 8 -> text.append("e\u0301a\u0308\u0323o\u0302\u0300".substring(0, 1 + random.nextInt(7)));
                    case 9 -> text.append(PUNCTUATION.charAt(random.nextInt(PUNCTUATION.length())));
                    default -> {
                        int[] range = RANGES.get(random.nextInt(RANGES.size()));
                        int count = 1 + random.nextInt(6);
                        for (int k = 0; k < count; k++) {
                            int cp = range[0] + random.nextInt(range[1] - range[0]);
                            if (Character.isDefined(cp) && !Character.isSurrogate((char) cp)) text.appendCodePoint(cp);
                        }
                    }
                }
            }
            return text.toString();
        }

        private String pick(String[] choices) {
            return choices[random.nextInt(choices.length)];
        }
    }
}
