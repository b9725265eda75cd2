package fs.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.format.ReferenceDequantizer;
import fs.tensor.DType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufFileTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @TempDir
    Path dir;

    private static byte[] floats(float... values) {
        ByteBuffer buffer = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float value : values) buffer.putFloat(value);
        return buffer.array();
    }

    /** One Q8_0 block: scale 0.5 (f16 0x3800), quants 0, 1, ..., 31 (so weight i is i / 2). */
    private static byte[] q8Block() {
        byte[] block = new byte[34];
        block[0] = 0x00;
        block[1] = 0x38;
        for (int i = 0; i < 32; i++) block[2 + i] = (byte) i;
        return block;
    }

    @Test
    void readsEveryMetadataValueTypeInFileOrder() {
        Path file = new GgufWriter()
                .u8("u8", 255).i8("i8", -1).u16("u16", 65535).i16("i16", -2).u32("u32", 4294967295L)
                .i32("i32", -3).u64("u64", -1L).i64("i64", Long.MIN_VALUE).f32("f32", 1.5f).f64("f64", 0.1)
                .bool("yes", true).bool("no", false).string("text", "héllo ✓")
                .array("strings", GgufValueType.STRING, "a", "", "ü")
                .array("ints", GgufValueType.INT32, 7, -8)
                .array("floats", GgufValueType.FLOAT32, 0.25f, -1f)
                .array("bools", GgufValueType.BOOL, true, false)
                .array("empty", GgufValueType.UINT64)
                .array("nested", GgufValueType.ARRAY, GgufWriter.array(GgufValueType.UINT8, 1, 2),
                        GgufWriter.array(GgufValueType.STRING, "x"))
                .write(dir.resolve("values.gguf"));
        try (GgufFile gguf = GgufFile.open(file)) {
            GgufMetadata m = gguf.metadata();
            assertEquals(List.of("u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "yes", "no", "text",
                    "strings", "ints", "floats", "bools", "empty", "nested"), List.copyOf(m.values().keySet()));
            assertEquals(new GgufValue(GgufValueType.UINT8, 255L), m.get("u8").orElseThrow());
            assertEquals(new GgufValue(GgufValueType.INT8, -1L), m.get("i8").orElseThrow());
            assertEquals(new GgufValue(GgufValueType.UINT16, 65535L), m.get("u16").orElseThrow());
            assertEquals(new GgufValue(GgufValueType.INT16, -2L), m.get("i16").orElseThrow());
            assertEquals(new GgufValue(GgufValueType.UINT32, 4294967295L), m.get("u32").orElseThrow());
            assertEquals(new GgufValue(GgufValueType.INT32, -3L), m.get("i32").orElseThrow());
            assertEquals(new GgufValue(GgufValueType.UINT64, -1L), m.get("u64").orElseThrow());
            assertEquals(new GgufValue(GgufValueType.INT64, Long.MIN_VALUE), m.get("i64").orElseThrow());
            assertEquals(new GgufValue(GgufValueType.FLOAT32, 1.5), m.get("f32").orElseThrow());
            assertEquals(new GgufValue(GgufValueType.FLOAT64, 0.1), m.get("f64").orElseThrow());
            assertTrue(m.bool("yes"));
            assertFalse(m.bool("no"));
            assertEquals("héllo ✓", m.string("text"));
            assertArrayEquals(new String[] {"a", "", "ü"}, m.array("strings", GgufValueType.STRING).strings());
            assertArrayEquals(new long[] {7, -8}, m.array("ints", GgufValueType.INT32).longs());
            assertArrayEquals(new double[] {0.25, -1}, m.array("floats", GgufValueType.FLOAT32).doubles());
            assertArrayEquals(new boolean[] {true, false}, m.array("bools", GgufValueType.BOOL).booleans());
            assertEquals(0, m.array("empty", GgufValueType.UINT64).length());
            GgufArray[] nested = m.array("nested", GgufValueType.ARRAY).arrays();
            assertArrayEquals(new long[] {1, 2}, nested[0].longs());
            assertArrayEquals(new String[] {"x"}, nested[1].strings());
            assertEquals(4294967295L, (long) m.nonNegativeInt("u8") + 4294967040L);
            assertEquals(0x1p64, m.number("u64"));
            assertEquals(1.5, m.number("f32"));
        }
    }

    @Test
    void tensorsAreSlicesOfTheMappingWithDimensionsReversedToRowMajor() {
        Path file = new GgufWriter()
                .string("general.architecture", "test")
                .tensor("matrix", DType.F32, new long[] {3, 2}, floats(1, 2, 3, 4, 5, 6))
                .tensor("q8", DType.Q8_0, new long[] {32, 1}, q8Block())
                .write(dir.resolve("tensors.gguf"));
        try (GgufFile gguf = GgufFile.open(file)) {
            assertEquals(3, gguf.version());
            assertEquals(32, gguf.alignment());
            assertEquals(0, gguf.dataStart() % 32);
            GgufTensor matrix = gguf.tensor("matrix").orElseThrow();
            assertArrayEquals(new long[] {2, 3}, matrix.shape());
            assertEquals(2, matrix.rows());
            assertEquals(3, matrix.columns());
            assertEquals(0, matrix.offset());
            assertTrue(matrix.data().isMapped(), "data must be the mapped file, not a copy");
            assertEquals(4f, matrix.row(1).get(F32, 0));
            GgufTensor q8 = gguf.tensor("q8").orElseThrow();
            assertEquals(32, q8.offset()); // the next multiple of the alignment after 24 bytes
            assertEquals(32, q8.data().address() - matrix.data().address());
            float[] weights = new float[32];
            ReferenceDequantizer.decode(q8.type(), q8.row(0), weights);
            for (int i = 0; i < 32; i++) assertEquals(i / 2f, weights[i]);
            assertEquals(List.of("matrix", "q8"), gguf.tensors().stream().map(GgufTensor::name).toList());
        }
    }

    @Test
    void readsVersion2AndHonorsGeneralAlignment() {
        Path file = new GgufWriter().version(2).alignment(256)
                .tensor("a", DType.F32, new long[] {1}, floats(1))
                .tensor("b", DType.F32, new long[] {1}, floats(2))
                .write(dir.resolve("aligned.gguf"));
        try (GgufFile gguf = GgufFile.open(file)) {
            assertEquals(2, gguf.version());
            assertEquals(256, gguf.alignment());
            assertEquals(0, gguf.dataStart() % 256);
            assertEquals(256, gguf.tensor("b").orElseThrow().offset());
            assertEquals(2f, gguf.tensor("b").orElseThrow().data().get(F32, 0));
        }
    }

    @Test
    void closingUnmapsTheData() {
        Path file = new GgufWriter().tensor("a", DType.F32, new long[] {1}, floats(1)).write(dir.resolve("c.gguf"));
        GgufFile gguf = GgufFile.open(file);
        GgufTensor a = gguf.tensor("a").orElseThrow();
        gguf.close();
        assertThrows(IllegalStateException.class, () -> a.data().get(F32, 0));
        gguf.close();
    }

    // ---- corrupt files: one FsException whose single-line message names the file (and the key or tensor) ----

    private FsException openFails(Path file) {
        FsException e = assertThrows(FsException.class, () -> GgufFile.open(file));
        assertTrue(e.getMessage().contains(file.toString()), "names the file: " + e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        return e;
    }

    private FsException openFails(String name, GgufWriter writer) {
        return openFails(writer.write(dir.resolve(name)));
    }

    private FsException openFails(String name, byte[] bytes) {
        return openFails(GgufWriter.write(dir.resolve(name), bytes));
    }

    private static void assertMentions(FsException e, String... parts) {
        for (String part : parts) assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
    }

    @Test
    void rejectsFilesThatAreNotGguf() throws IOException {
        assertMentions(openFails("empty.gguf", new byte[0]), "not a GGUF file");
        assertMentions(openFails("zip.gguf", new byte[] {'P', 'K', 3, 4, 0, 0, 0, 0}), "not a GGUF file");
        assertMentions(openFails(dir.resolve("absent.gguf")), "no such file");
        assertMentions(openFails(Files.createDirectory(dir.resolve("sub.gguf"))), "is a directory");
    }

    @Test
    void rejectsUnsupportedVersionsNamingABigEndianFile() {
        assertMentions(openFails("v1.gguf", new GgufWriter().version(1)), "version 1 is not supported", "2 and 3");
        assertMentions(openFails("v4.gguf", new GgufWriter().version(4)), "version 4 is not supported");
        assertMentions(openFails("be.gguf", new GgufWriter().version(Integer.reverseBytes(3))), "big-endian");
    }

    @Test
    void rejectsCountsTheFileCannotHoldBeforeAllocating() {
        assertMentions(openFails("tensors.gguf", new GgufWriter().counts(1L << 40, 0)), "tensor count 1099511627776",
                "more than the file could hold");
        assertMentions(openFails("kvs.gguf", new GgufWriter().counts(0, -1)), "metadata count 18446744073709551615");
        byte[] hugeArray = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(GgufValueType.UINT64.id()).putLong(1L << 60).array();
        assertMentions(openFails("array.gguf", new GgufWriter().raw("tokens", GgufValueType.ARRAY.id(), hugeArray)),
                "key 'tokens'", "an array of 1152921504606846976 UINT64 values cannot fit");
        byte[] hugeString = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(Long.MAX_VALUE).array();
        assertMentions(openFails("string.gguf", new GgufWriter().raw("name", GgufValueType.STRING.id(), hugeString)),
                "key 'name'", "a string of 9223372036854775807 bytes runs past the end");
        assertMentions(openFails("key.gguf", new GgufWriter().rawKey(hugeString, 0, new byte[1])),
                "the key of metadata entry 0", "runs past the end");
    }

    @Test
    void rejectsATruncatedHeaderNamingWhatWasBeingRead() {
        byte[] whole = new GgufWriter().string("general.name", "truncated").u32("count", 7).bytes();
        int end = 24 + GgufWriter.string("general.name").length + 4 + GgufWriter.string("truncated").length
                + GgufWriter.string("count").length + 4 + 4; // the rest is padding to the alignment
        FsException inString = openFails("cut1.gguf", Arrays.copyOf(whole, end - 25));
        assertMentions(inString, "key 'general.name'", "a string of 9 bytes runs past the end");
        FsException inValue = openFails("cut2.gguf", Arrays.copyOf(whole, end - 2));
        assertMentions(inValue, "key 'count'", "runs past the end of the file");
        assertMentions(openFails("cut3.gguf", Arrays.copyOf(whole, 10)), "the tensor count", "runs past the end");
    }

    @Test
    void rejectsBadValuesNamingTheKey() {
        assertMentions(openFails("type.gguf", new GgufWriter().raw("k", 13, new byte[4])), "key 'k'",
                "value type 13 is not a GGUF value type");
        assertMentions(openFails("elem.gguf", new GgufWriter().raw("k", GgufValueType.ARRAY.id(),
                ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putInt(99).array())), "key 'k'", "99");
        assertMentions(openFails("bool.gguf", new GgufWriter().raw("flag", GgufValueType.BOOL.id(), new byte[] {2})),
                "key 'flag'", "a boolean must be 0 or 1, found 2");
        byte[] badUtf8 = {2, 0, 0, 0, 0, 0, 0, 0, (byte) 0xC3, 0x28};
        assertMentions(openFails("utf8.gguf", new GgufWriter().raw("s", GgufValueType.STRING.id(), badUtf8)),
                "key 's'", "not valid UTF-8");
        assertMentions(openFails("dup.gguf", new GgufWriter().u32("general.x", 1).u32("general.x", 2)),
                "key 'general.x' appears twice");
        byte[] deep = GgufWriter.array(GgufValueType.UINT8);
        for (int i = 0; i < GgufHeader.MAX_ARRAY_DEPTH; i++) deep = GgufWriter.array(GgufValueType.ARRAY, (Object) deep);
        assertMentions(openFails("deep.gguf", new GgufWriter().raw("deep", GgufValueType.ARRAY.id(), deep)),
                "key 'deep'", "nested more than 16 deep");
    }

    @Test
    void stringsHoldingTheReplacementCharacterAreReadAndMalformedOnesInAnArrayFailNamingTheElement() {
        // Strings are decoded leniently and only those that came out with U+FFFD are decoded again strictly: a real
        // U+FFFD, long strings and many of them must come out as written, every malformed sequence must still fail.
        String[] tokens = new String[1000];
        for (int i = 0; i < tokens.length; i++) tokens[i] = i % 3 == 0 ? "\uFFFDt" + i : "Ġtoken " + "é".repeat(i % 400);
        Path file = new GgufWriter().string("replacement", "a\uFFFDb")
                .array("tokens", GgufValueType.STRING, (Object[]) tokens).write(dir.resolve("fffd.gguf"));
        try (GgufFile gguf = GgufFile.open(file)) {
            assertEquals("a\uFFFDb", gguf.metadata().string("replacement"));
            assertArrayEquals(tokens, gguf.metadata().array("tokens", GgufValueType.STRING).strings());
        }
        byte[][] malformed = {
            {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, // a UTF-16 surrogate encoded as UTF-8
            {(byte) 0xC0, (byte) 0xAF}, // an overlong '/'
            {(byte) 0xE2, (byte) 0x82}, // a sequence cut short at the end
            {(byte) 0xFF},
        };
        for (byte[] bad : malformed) {
            // One holding U+FFFD, then the malformed one; and after a plain string, with no U+FFFD in the array.
            for (String first : List.of("\uFFFD", "ok")) {
                assertMentions(openFails(stringArray("list", GgufWriter.string(first), raw(bad))),
                        "key 'list'", "element 1", "not valid UTF-8");
            }
        }
    }

    @Test
    void aCharacterSplitBetweenTwoStringsOfAnArrayIsNotValidUtf8() {
        // An array's strings are checked in one decoding of their bytes end to end, where 'é' cut in two would read
        // as whole: each string must also start on a character.
        byte[] e = "é".getBytes(StandardCharsets.UTF_8);
        FsException split = openFails(stringArray("list", GgufWriter.string("a"), raw(e[0]), raw(e[1])));
        assertMentions(split, "key 'list'", "element 1", "not valid UTF-8");
        Path whole = new GgufWriter().array("list", GgufValueType.STRING, "a", "é", "", "é")
                .write(dir.resolve("whole.gguf"));
        try (GgufFile gguf = GgufFile.open(whole)) {
            assertArrayEquals(new String[] {"a", "é", "", "é"},
                    gguf.metadata().array("list", GgufValueType.STRING).strings());
        }
    }

    /** A string of {@code bytes} as the file spells it, whatever they are. */
    private static byte[] raw(byte... bytes) {
        return ByteBuffer.allocate(8 + bytes.length).order(ByteOrder.LITTLE_ENDIAN).putLong(bytes.length).put(bytes)
                .array();
    }

    /** A file whose one key is an array of the strings {@code elements}, each as {@link #raw} or GgufWriter spell them. */
    private Path stringArray(String key, byte[]... elements) {
        ByteArrayOutputStream array = new ByteArrayOutputStream();
        array.writeBytes(ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(GgufValueType.STRING.id()).putLong(elements.length).array());
        for (byte[] element : elements) array.writeBytes(element);
        return new GgufWriter().raw(key, GgufValueType.ARRAY.id(), array.toByteArray()).write(dir.resolve(key + ".gguf"));
    }

    @Test
    void namesFromTheFileAreQuotedOnOneLineWithControlCharactersEscapedAndLongOnesCut() {
        // Found by GgufFuzzTest: a key holding a line break split the message over two lines.
        FsException key = openFails("newline-key.gguf", new GgufWriter().raw("general\nname", 99, new byte[4]));
        assertMentions(key, "key 'general\\u000aname'", "value type 99");
        FsException tensor = openFails("long-name.gguf", new GgufWriter().tensorInfo("w".repeat(5000) + "\r", 99, 0, 32));
        assertMentions(tensor, "tensor '" + "w".repeat(60) + "…'", "unknown ggml type 99");
        assertTrue(tensor.getMessage().length() < 300 + dir.toString().length(), tensor.getMessage());
        FsException value = openFails("text.gguf", new GgufWriter().string("general.alignment", "line\nbreak"));
        assertMentions(value, "a string 'line\\u000abreak'");
    }

    @Test
    void rejectsAnAlignmentThatIsNotAPowerOfTwo() {
        for (long alignment : new long[] {0, 3, 48, 1L << 31}) {
            assertMentions(openFails("align" + alignment + ".gguf", new GgufWriter().u32("general.alignment", alignment)),
                    "key 'general.alignment'", "power of two");
        }
        assertMentions(openFails("align-text.gguf", new GgufWriter().string("general.alignment", "32")),
                "key 'general.alignment'", "a string '32'");
    }

    @Test
    void rejectsTensorInfosNamingTheTensor() {
        assertMentions(openFails("dims0.gguf", new GgufWriter().tensorInfo("w", 0, 0).data(32)), "tensor 'w'",
                "has 0 dimensions");
        assertMentions(openFails("dims5.gguf", new GgufWriter().tensorInfo("w", 0, 0, 1, 1, 1, 1, 1).data(32)),
                "tensor 'w'", "has 5 dimensions; GGUF tensors have 1 to 4");
        assertMentions(openFails("negdim.gguf", new GgufWriter().tensorInfo("w", 0, 0, -1).data(32)), "tensor 'w'",
                "dimension 18446744073709551615 is too large");
        assertMentions(openFails("unknown.gguf", new GgufWriter().tensorInfo("w", 99, 0, 32).data(128)),
                "tensor 'w'", "unknown ggml type 99");
        FsException unsupported = openFails("iq3.gguf", new GgufWriter().tensorInfo("w", 21, 0, 256).data(256));
        assertMentions(unsupported, "tensor 'w'", "is stored as IQ3_S, which fs does not read", "Q4_K");
        assertMentions(openFails("blocks.gguf", new GgufWriter().tensorInfo("w", DType.Q8_0.ggmlId(), 0, 31, 2).data(68)),
                "tensor 'w'", "rows of 31 elements are not whole Q8_0 blocks of 32");
        assertMentions(openFails("huge.gguf", new GgufWriter().tensorInfo("w", 0, 0, 1L << 32, 1L << 32).data(32)),
                "tensor 'w'", "too large to address");
        assertMentions(openFails("empty-huge.gguf", new GgufWriter().tensorInfo("w", 0, 0, 0, 1L << 62, 1L << 62)),
                "tensor 'w'", "too large to address");
        assertMentions(openFails("misaligned.gguf", new GgufWriter().tensorInfo("w", 0, 4, 1).data(32)),
                "tensor 'w'", "data offset 4 is not a multiple of the alignment 32");
        assertMentions(openFails("dupname.gguf", new GgufWriter().tensorInfo("w", 0, 0, 1).tensorInfo("w", 0, 32, 1)
                .data(64)), "tensor 'w' appears twice");
    }

    @Test
    void rejectsTensorDataOutsideTheFileOrOverlapping() {
        byte[] whole = new GgufWriter().tensor("w", DType.F32, new long[] {8}, floats(1, 2, 3, 4, 5, 6, 7, 8)).bytes();
        assertMentions(openFails("cut.gguf", Arrays.copyOf(whole, whole.length - 1)), "tensor 'w'",
                "(32 bytes) runs past the end of the file", "holds 31 bytes");
        assertMentions(openFails("far.gguf", new GgufWriter().tensorInfo("w", 0, 1L << 62, 1).data(32)), "tensor 'w'",
                "offset 4611686018427387904", "runs past the end");
        assertMentions(openFails("overlap.gguf", new GgufWriter().tensorInfo("a", 0, 0, 16).tensorInfo("b", 0, 32, 8)
                .data(64)), "tensor 'b'", "[32, 64) overlaps tensor 'a' [0, 64)");
    }
}
