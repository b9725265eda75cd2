package fs.fuzz;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Derives fuzz inputs from valid seed files: blind byte edits (flips, deletions, duplications, truncation, splicing
 * with another seed) and JSON-aware ones that keep most of the file valid while putting the wrong thing in one place
 * (a value of another type, a huge, negative or fractional number, deep nesting, a duplicated key, a lone surrogate,
 * a big string). The same random source always gives the same input, so any failure can be replayed from its seed.
 */
public final class Mutator implements FuzzCampaign.Inputs {
    /** Values that loaders tend to mishandle, as JSON text. */
    private static final List<String> NASTY_VALUES = List.of(
            "0", "-1", "1", "-0", "2", "0.5", "1.5", "-0.0", "1e309", "-1e309", "1e-400", "4.9e-324", "1e2", "1E+2",
            "127", "128", "255", "256", "65535", "65536", "32767", "32768", "151643", "151935", "151936", "151937",
            "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
            "9007199254740993", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1000000000",
            "100000000000000000000000000000000000000000000", "NaN", "Infinity", "-Infinity", "true", "false", "null",
            "\"\"", "\" \"", "\"a\"", "\"\\ud800\"", "\"\\udc00\"", "\"x\\ud83dy\"", "\"\\u0000\"", "\"\\\"\"",
            "\"BPE\"", "\"F32\"", "\"BF16\"", "\"ByteLevel\"", "\"Sequence\"", "\"Split\"", "\"NFC\"", "\"(\"",
            "\"[\"", "\"(?:a|b)*\"", "\"(a*)*b\"", "[]", "{}", "[1]", "[-1]", "[1,2]", "[[]]", "[null]", "[\"a\"]",
            "{\"a\":1}", "{\"type\":\"BPE\"}", "[0,0]", "[0,1000000000]", "[9223372036854775807]");

    private static final byte[] INTERESTING_BYTES = {
        0, 1, 0x7F, (byte) 0x80, (byte) 0xBF, (byte) 0xC0, (byte) 0xC3, (byte) 0xED, (byte) 0xF0, (byte) 0xF8,
        (byte) 0xFF, '"', '\\', '{', '}', '[', ']', ',', ':', '-', '0', '9', 'e', ' ', '\n'
    };

    private final List<byte[]> seeds;

    public Mutator(List<byte[]> seeds) {
        if (seeds.isEmpty()) throw new IllegalArgumentException("no seeds");
        this.seeds = List.copyOf(seeds);
    }

    /** A seed with one to four mutations stacked on it. */
    @Override
    public byte[] next(SplittableRandom random) {
        byte[] input = seeds.get(random.nextInt(seeds.size()));
        int mutations = 1 + random.nextInt(random.nextInt(4) + 1);
        for (int i = 0; i < mutations; i++) input = mutateOnce(input, random);
        return input;
    }

    byte[] mutateOnce(byte[] input, SplittableRandom random) {
        if (input.length == 0) return ascii(NASTY_VALUES.get(random.nextInt(NASTY_VALUES.size())));
        return switch (random.nextInt(16)) {
            case 0 -> flipBit(input, random);
            case 1 -> setByte(input, random);
            case 2 -> deleteRange(input, random);
            case 3 -> duplicateRange(input, random);
            case 4 -> Arrays.copyOf(input, random.nextInt(input.length));
            case 5 -> splice(input, seeds.get(random.nextInt(seeds.size())), random);
            case 6, 7, 8 -> replaceValue(input, random, ascii(NASTY_VALUES.get(random.nextInt(NASTY_VALUES.size()))));
            case 9 -> replaceValue(input, random, anotherValue(input, random));
            case 10 -> replaceValue(input, random, deepNesting(random));
            case 11 -> replaceValue(input, random, bigString(random));
            case 12 -> duplicateMember(input, random);
            case 13 -> wrapValue(input, random);
            case 14 -> insertIntoString(input, random);
            default -> replaceKey(input, random);
        };
    }

    private static byte[] flipBit(byte[] input, SplittableRandom random) {
        byte[] out = input.clone();
        out[random.nextInt(out.length)] ^= (byte) (1 << random.nextInt(8));
        return out;
    }

    private static byte[] setByte(byte[] input, SplittableRandom random) {
        byte[] out = input.clone();
        out[random.nextInt(out.length)] = INTERESTING_BYTES[random.nextInt(INTERESTING_BYTES.length)];
        return out;
    }

    private static byte[] deleteRange(byte[] input, SplittableRandom random) {
        int from = random.nextInt(input.length);
        int to = Math.min(input.length, from + 1 + random.nextInt(Math.min(64, input.length - from)));
        return replace(input, from, to, new byte[0]);
    }

    private static byte[] duplicateRange(byte[] input, SplittableRandom random) {
        int from = random.nextInt(input.length);
        int to = Math.min(input.length, from + 1 + random.nextInt(Math.min(256, input.length - from)));
        int at = random.nextInt(input.length + 1);
        return replace(input, at, at, Arrays.copyOfRange(input, from, to));
    }

    private static byte[] splice(byte[] input, byte[] other, SplittableRandom random) {
        int cut = random.nextInt(input.length + 1);
        int otherCut = other.length == 0 ? 0 : random.nextInt(other.length);
        return replace(input, cut, input.length, Arrays.copyOfRange(other, otherCut, other.length));
    }

    private static byte[] replaceValue(byte[] input, SplittableRandom random, byte[] value) {
        List<int[]> values = JsonValueSpans.of(input).values();
        if (values.isEmpty()) return flipBit(input, random);
        int[] span = values.get(random.nextInt(values.size()));
        return replace(input, span[0], span[1], value);
    }

    private byte[] anotherValue(byte[] input, SplittableRandom random) {
        byte[] source = random.nextBoolean() ? input : seeds.get(random.nextInt(seeds.size()));
        List<int[]> values = JsonValueSpans.of(source).values();
        if (values.isEmpty()) return ascii("null");
        int[] span = values.get(random.nextInt(values.size()));
        return Arrays.copyOfRange(source, span[0], Math.min(span[1], span[0] + 4096));
    }

    /** Arrays or objects nested past any sensible depth (Jackson's own limit is 1,000). */
    private static byte[] deepNesting(SplittableRandom random) {
        int depth = 1 + random.nextInt(random.nextBoolean() ? 64 : 1500);
        boolean objects = random.nextBoolean();
        String open = objects ? "{\"a\":" : "[";
        String close = objects ? "}" : "]";
        return ascii(open.repeat(depth) + "1" + close.repeat(depth));
    }

    private static byte[] bigString(SplittableRandom random) {
        return ascii("\"" + "x".repeat(1 + random.nextInt(random.nextBoolean() ? 100 : 60_000)) + "\"");
    }

    /** The same key twice in one object, the second time with another value. */
    private static byte[] duplicateMember(byte[] input, SplittableRandom random) {
        JsonValueSpans spans = JsonValueSpans.of(input);
        if (spans.keys().isEmpty()) return flipBit(input, random);
        int[] key = spans.keys().get(random.nextInt(spans.keys().size()));
        byte[] member = concat(Arrays.copyOfRange(input, key[0], key[1]), ascii(":"),
                ascii(NASTY_VALUES.get(random.nextInt(NASTY_VALUES.size()))), ascii(","));
        return replace(input, key[0], key[0], member);
    }

    private static byte[] wrapValue(byte[] input, SplittableRandom random) {
        List<int[]> values = JsonValueSpans.of(input).values();
        if (values.isEmpty()) return flipBit(input, random);
        int[] span = values.get(random.nextInt(values.size()));
        byte[] value = Arrays.copyOfRange(input, span[0], span[1]);
        byte[] wrapped = random.nextBoolean() ? concat(ascii("["), value, ascii("]")) : concat(ascii("{\"x\":"), value, ascii("}"));
        return replace(input, span[0], span[1], wrapped);
    }

    /** A lone surrogate, a control character or invalid UTF-8 inside a string. */
    private static byte[] insertIntoString(byte[] input, SplittableRandom random) {
        JsonValueSpans spans = JsonValueSpans.of(input);
        List<int[]> strings = random.nextBoolean() ? spans.keys() : spans.values();
        if (strings.isEmpty()) return flipBit(input, random);
        int[] span = strings.get(random.nextInt(strings.size()));
        if (span[1] - span[0] < 2) return flipBit(input, random);
        int at = span[0] + 1 + random.nextInt(span[1] - span[0] - 1);
        byte[][] insertions = {ascii("\\ud800"), ascii("\\udfff"), ascii("\\u0000"), {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
            {(byte) 0xC3}, {(byte) 0xFF}, {1}, ascii("\\x"), ascii("\\")};
        return replace(input, at, at, insertions[random.nextInt(insertions.length)]);
    }

    private static byte[] replaceKey(byte[] input, SplittableRandom random) {
        JsonValueSpans spans = JsonValueSpans.of(input);
        if (spans.keys().size() < 2) return flipBit(input, random);
        int[] key = spans.keys().get(random.nextInt(spans.keys().size()));
        int[] other = spans.keys().get(random.nextInt(spans.keys().size()));
        return replace(input, key[0], key[1], Arrays.copyOfRange(input, other[0], other[1]));
    }

    private static byte[] replace(byte[] input, int from, int to, byte[] with) {
        byte[] out = new byte[input.length - (to - from) + with.length];
        System.arraycopy(input, 0, out, 0, from);
        System.arraycopy(with, 0, out, from, with.length);
        System.arraycopy(input, to, out, from + with.length, input.length - to);
        return out;
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) out.writeBytes(part);
        return out.toByteArray();
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
