package fs.safetensors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsFileTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort HALF = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @TempDir
    Path dir;

    @Test
    void readsBackTensorsOfEveryComputeTypeAndTheMetadata() {
        Path file = dir.resolve("ok.safetensors");
        new SafetensorsWriter()
                .metadata("format", "pt")
                .f32("a.f32", new long[] {2, 3}, 1.5f, -2f, 3.25f, 0f, 1e-3f, 7f)
                .bf16("b.bf16", new long[] {4}, 1f, -0.5f, 3f, 256f)
                .f16("c.f16", new long[] {1, 2}, 0.25f, -65504f)
                .write(file);

        try (SafetensorsFile st = SafetensorsFile.open(file)) {
            assertEquals(Map.of("format", "pt"), st.metadata());
            assertEquals(List.of("a.f32", "b.bf16", "c.f16"), st.tensors().stream().map(Tensor::name).toList());

            Tensor a = st.tensor("a.f32").orElseThrow();
            assertEquals(DType.F32, a.dtype());
            assertArrayEquals(new long[] {2, 3}, a.shape());
            assertEquals(24, a.data().byteSize());
            float[] expected = {1.5f, -2f, 3.25f, 0f, 1e-3f, 7f};
            for (int i = 0; i < expected.length; i++) assertEquals(expected[i], a.data().getAtIndex(F32, i));

            Tensor b = st.tensor("b.bf16").orElseThrow();
            assertEquals(DType.BF16, b.dtype());
            float[] expectedB = {1f, -0.5f, 3f, 256f};
            for (int i = 0; i < expectedB.length; i++) {
                assertEquals(expectedB[i], Float.intBitsToFloat(b.data().getAtIndex(HALF, i) << 16));
            }

            Tensor c = st.tensor("c.f16").orElseThrow();
            assertEquals(DType.F16, c.dtype());
            assertEquals(0.25f, Float.float16ToFloat(c.data().getAtIndex(HALF, 0)));
            assertEquals(-65504f, Float.float16ToFloat(c.data().getAtIndex(HALF, 1)));
            assertTrue(st.tensor("absent").isEmpty());
        }
    }

    @Test
    void tensorDataIsASliceOfTheMappingThatDiesWithTheFile() throws IOException {
        Path file = dir.resolve("slice.safetensors");
        new SafetensorsWriter().f32("x", new long[] {2}, 4f, 5f).f32("y", new long[] {1}, 6f).write(file);
        long headerEnd = Files.size(file) - 12;

        SafetensorsFile st = SafetensorsFile.open(file);
        Tensor x = st.tensor("x").orElseThrow();
        Tensor y = st.tensor("y").orElseThrow();
        assertTrue(x.data().isMapped(), "data must be the mapped file, not a copy");
        assertTrue(y.data().isMapped());
        // Both slices come from one mapping of the whole file: their distance is their distance in the file.
        assertEquals(8, y.data().address() - x.data().address());
        // The mapping starts page-aligned at file offset 0, so x sits exactly where its bytes are in the file.
        assertEquals(0, (x.data().address() - headerEnd) % 4096, "x must sit headerEnd bytes into the mapping");
        st.close();
        assertThrows(IllegalStateException.class, () -> x.data().get(F32, 0), "closing must unmap the data");
        st.close(); // closing twice is harmless
    }

    @Test
    void zeroSizedTensorsAndOutOfOrderHeaderEntriesAreListedInDataOrder() {
        Path file = dir.resolve("order.safetensors");
        String header = """
                {"z":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},
                 "empty":{"dtype":"BF16","shape":[0,5],"data_offsets":[4,4]},
                 "a":{"dtype":"I8","shape":[4],"data_offsets":[0,4]}}""";
        SafetensorsWriter.writeRaw(file, header, new byte[8]);
        try (SafetensorsFile st = SafetensorsFile.open(file)) {
            assertEquals(List.of("a", "empty", "z"), st.tensors().stream().map(Tensor::name).toList());
            assertEquals(0, st.tensor("empty").orElseThrow().data().byteSize());
            assertEquals(Map.of(), st.metadata());
        }
    }

    @Test
    void opensATensorLargerThanTwoGigabytesWithoutReadingIt() throws IOException {
        Path file = dir.resolve("big.safetensors");
        long elements = (1L << 31) / 2 + 8; // BF16: 2^31 + 16 bytes, past int offsets
        String header = "{\"big\":{\"dtype\":\"BF16\",\"shape\":[" + elements + "],\"data_offsets\":[0," + elements * 2 + "]}}";
        SafetensorsWriter.writeRaw(file, header, new byte[0]);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(raf.length() + elements * 2); // sparse: costs no disk and no reading
            raf.seek(raf.length() - 2);
            raf.write(new byte[] {0x34, 0x12});
        }
        try (SafetensorsFile st = SafetensorsFile.open(file)) {
            Tensor big = st.tensor("big").orElseThrow();
            assertEquals(elements * 2, big.data().byteSize());
            assertEquals((short) 0x1234, big.data().getAtIndex(HALF, elements - 1));
        }
    }

    // ---- corrupt files: one FsException whose single-line message names the file (and the tensor) ----

    private FsException openFails(Path file) {
        FsException e = assertThrows(FsException.class, () -> SafetensorsFile.open(file));
        assertTrue(e.getMessage().contains(file.toString()), "names the file: " + e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        return e;
    }

    private static void assertMentions(FsException e, String... parts) {
        for (String part : parts) assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
    }

    @Test
    void rejectsAFileShorterThanTheSizeField() throws IOException {
        Path file = Files.write(dir.resolve("short.safetensors"), new byte[] {1, 2, 3});
        assertMentions(openFails(file), "3 bytes", "too short");
        assertMentions(openFails(Files.write(dir.resolve("empty.safetensors"), new byte[0])), "0 bytes");
    }

    @Test
    void rejectsAHugeHeaderSizeWithoutAllocatingIt() {
        Path file = dir.resolve("huge.safetensors");
        SafetensorsWriter.writeRaw(file, 1L << 40, new byte[16]);
        assertMentions(openFails(file), "header size 1099511627776", "limit");
        Path negative = dir.resolve("negative.safetensors");
        SafetensorsWriter.writeRaw(negative, -1L, new byte[16]);
        assertMentions(openFails(negative), "header size 18446744073709551615");
    }

    @Test
    void rejectsAHeaderLargerThanTheFile() {
        Path file = dir.resolve("truncated-header.safetensors");
        SafetensorsWriter.writeRaw(file, 1000, "{\"a\":".getBytes());
        assertMentions(openFails(file), "header size 1000", "larger than the file");
    }

    @Test
    void rejectsATruncatedDataSection() throws IOException {
        Path whole = dir.resolve("whole.safetensors");
        new SafetensorsWriter().f32("w", new long[] {4}, 1, 2, 3, 4).write(whole);
        byte[] bytes = Files.readAllBytes(whole);
        Path cut = Files.write(dir.resolve("cut.safetensors"), java.util.Arrays.copyOf(bytes, bytes.length - 1));
        assertMentions(openFails(cut), "tensor 'w'", "past the end of the file", "15 bytes");
    }

    @Test
    void rejectsMalformedJson() {
        Path file = dir.resolve("bad-json.safetensors");
        SafetensorsWriter.writeRaw(file, "{\"a\": {\"dtype\": \"F32\"", new byte[0]);
        FsException unclosed = openFails(file);
        assertMentions(unclosed, "malformed JSON", "ends before the '}'", "line 1, column 7");
        assertFalse(unclosed.getMessage().contains("Source"), "no Jackson source excerpt: " + unclosed.getMessage());
        Path garbage = dir.resolve("trailing.safetensors");
        SafetensorsWriter.writeRaw(garbage, "{} {}", new byte[0]);
        assertMentions(openFails(garbage), "malformed JSON");
        Path deep = dir.resolve("deep.safetensors"); // deep enough to overflow a recursive parser's stack
        SafetensorsWriter.writeRaw(deep, "{\"w\":" + "[".repeat(200_000) + "]".repeat(200_000) + "}", new byte[0]);
        assertMentions(openFails(deep), "malformed JSON");
    }

    @Test
    void rejectsAJsonArrayInsteadOfAnObject() {
        Path file = dir.resolve("array.safetensors");
        SafetensorsWriter.writeRaw(file, "[1, 2]", new byte[0]);
        assertMentions(openFails(file), "expected a JSON object, found array");
        Path blank = dir.resolve("blank.safetensors");
        SafetensorsWriter.writeRaw(blank, "        ", new byte[0]);
        assertMentions(openFails(blank), "expected a JSON object, found nothing");
    }

    @Test
    void rejectsDuplicateTensorNames() {
        Path file = dir.resolve("dup.safetensors");
        String entry = "{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}";
        SafetensorsWriter.writeRaw(file, "{\"w\":" + entry + ",\"w\":" + entry + "}", new byte[1]);
        assertMentions(openFails(file), "Duplicate", "'w'");
    }

    @Test
    void rejectsAnUnknownDtypeByName() {
        Path file = dir.resolve("dtype.safetensors");
        SafetensorsWriter.writeRaw(file, "{\"w\":{\"dtype\":\"Q4_K\",\"shape\":[1],\"data_offsets\":[0,1]}}", new byte[1]);
        assertMentions(openFails(file), "tensor 'w'", "unknown dtype 'Q4_K'");
    }

    @Test
    void acceptsEveryStandardDtypeName() {
        Path file = dir.resolve("all-dtypes.safetensors");
        SafetensorsWriter writer = new SafetensorsWriter();
        for (DType dtype : DType.safetensorsTypes()) writer.zeros(dtype.name().toLowerCase(), dtype, 3);
        writer.write(file);
        try (SafetensorsFile st = SafetensorsFile.open(file)) {
            for (DType dtype : DType.safetensorsTypes()) {
                Tensor tensor = st.tensor(dtype.name().toLowerCase()).orElseThrow();
                assertEquals(dtype, tensor.dtype());
                assertEquals(3L * dtype.blockBytes(), tensor.data().byteSize());
            }
        }
    }

    @Test
    void rejectsAHeaderSizeOneByteShort() throws IOException {
        Path good = dir.resolve("good.safetensors");
        new SafetensorsWriter().f32("a", new long[] {2}, 1f, 2f).f32("b", new long[] {1}, 3f).write(good);
        byte[] bytes = Files.readAllBytes(good);
        long headerSize = java.nio.ByteBuffer.wrap(bytes, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        byte[] rest = java.util.Arrays.copyOfRange(bytes, 8, bytes.length);
        // The writer pads this header with spaces, so one byte less still parses: every tensor would be read one
        // byte early, with one byte left over at the end.
        assertEquals(' ', bytes[Math.toIntExact(8 + headerSize - 1)], "the header ends in padding");
        Path shorter = dir.resolve("shorter.safetensors");
        SafetensorsWriter.writeRaw(shorter, headerSize - 1, rest);
        assertMentions(openFails(shorter), "1 byte after the last tensor 'b'", "header size");
    }

    @Test
    void rejectsDataBeforeBetweenOrAfterTheTensors() {
        Path before = dir.resolve("before.safetensors");
        SafetensorsWriter.writeRaw(before, "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2,4]}}", new byte[4]);
        assertMentions(openFails(before), "2 bytes before the first tensor 'a'");
        Path between = dir.resolve("between.safetensors");
        SafetensorsWriter.writeRaw(between, """
                {"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},
                 "b":{"dtype":"U8","shape":[1],"data_offsets":[5,6]}}""", new byte[6]);
        assertMentions(openFails(between), "3 bytes between tensor 'a' [0, 2] and tensor 'b' [5, 6]");
        Path after = dir.resolve("after.safetensors");
        SafetensorsWriter.writeRaw(after, "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", new byte[7]);
        assertMentions(openFails(after), "5 bytes after the last tensor 'a'");
        Path noTensors = dir.resolve("no-tensors.safetensors");
        SafetensorsWriter.writeRaw(noTensors, "{}", new byte[3]);
        assertMentions(openFails(noTensors), "3 bytes", "no tensors");
    }

    @Test
    void rejectsOverlappingTensors() {
        Path file = dir.resolve("overlap.safetensors");
        String header = """
                {"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
                 "b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}""";
        SafetensorsWriter.writeRaw(file, header, new byte[12]);
        assertMentions(openFails(file), "tensor 'b'", "overlap tensor 'a'", "[4, 12]", "[0, 8]");
    }

    @Test
    void rejectsASizeThatDoesNotMatchTheShape() {
        Path file = dir.resolve("mismatch.safetensors");
        SafetensorsWriter.writeRaw(file, "{\"w\":{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_offsets\":[0,8]}}", new byte[8]);
        assertMentions(openFails(file), "tensor 'w'", "hold 8 bytes", "needs 12");
    }

    @Test
    void rejectsAShapeWhoseByteCountOverflows() {
        Path file = dir.resolve("overflow.safetensors");
        String shape = "[4294967296,4294967296]"; // 2^64 elements: wraps to 0 without exact multiplication
        SafetensorsWriter.writeRaw(file, "{\"w\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":[0,0]}}", new byte[0]);
        assertMentions(openFails(file), "tensor 'w'", "too large");
    }

    @Test
    void rejectsNegativeAndReversedOffsetsAndNegativeDimensions() {
        Path negative = dir.resolve("neg.safetensors");
        SafetensorsWriter.writeRaw(negative, "{\"w\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[-4,0]}}", new byte[4]);
        assertMentions(openFails(negative), "tensor 'w'", "negative");

        Path reversed = dir.resolve("rev.safetensors");
        SafetensorsWriter.writeRaw(reversed, "{\"w\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,0]}}", new byte[4]);
        assertMentions(openFails(reversed), "tensor 'w'", "reversed");

        Path dim = dir.resolve("dim.safetensors");
        SafetensorsWriter.writeRaw(dim, "{\"w\":{\"dtype\":\"U8\",\"shape\":[-2,-2],\"data_offsets\":[0,4]}}", new byte[4]);
        assertMentions(openFails(dim), "tensor 'w'", "negative dimension");
    }

    @Test
    void rejectsEntriesWithMissingOrMistypedFields() {
        String[][] cases = {
            {"{\"w\":[]}", "expected an object"},
            {"{\"w\":{\"shape\":[1],\"data_offsets\":[0,1]}}", "dtype is missing"},
            {"{\"w\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,1]}}", "dtype must be a string"},
            {"{\"w\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}", "shape is missing"},
            {"{\"w\":{\"dtype\":\"U8\",\"shape\":\"1\",\"data_offsets\":[0,1]}}", "shape must be an array"},
            {"{\"w\":{\"dtype\":\"U8\",\"shape\":[1.5],\"data_offsets\":[0,1]}}", "shape must be an array of integers"},
            {"{\"w\":{\"dtype\":\"U8\",\"shape\":[1]}}", "data_offsets is missing"},
            {"{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0]}}", "must have 2 elements"},
            {"{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,99999999999999999999]}}", "array of integers"},
        };
        for (int i = 0; i < cases.length; i++) {
            Path file = dir.resolve("fields" + i + ".safetensors");
            SafetensorsWriter.writeRaw(file, cases[i][0], new byte[1]);
            assertMentions(openFails(file), "tensor 'w'", cases[i][1]);
        }
        Path meta = dir.resolve("meta.safetensors");
        SafetensorsWriter.writeRaw(meta, "{\"__metadata__\":{\"format\":1}}", new byte[0]);
        assertMentions(openFails(meta), "__metadata__", "'format'", "must be a string");
    }

    @Test
    void rejectsADirectoryAndAMissingFile() throws IOException {
        assertMentions(openFails(dir.resolve("absent.safetensors")), "no such file");
        assertMentions(openFails(Files.createDirectory(dir.resolve("sub.safetensors"))), "is a directory");
    }

    /** Names and values from the header are quoted and cut: a line break in a name, a 2,000-character dtype. */
    @Test
    void quotesNamesAndValuesFromTheHeaderOnOneShortLine() {
        Path file = dir.resolve("odd.safetensors");
        SafetensorsWriter.writeRaw(file, "{\"scal\\r\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,1]}}", new byte[1]);
        assertMentions(openFails(file), "tensor 'scal\\u000d'");
        SafetensorsWriter.writeRaw(file, "{\"w\":{\"dtype\":\"" + "x".repeat(2000) + "\",\"shape\":[1],"
                + "\"data_offsets\":[0,1]}}", new byte[1]);
        FsException dtype = openFails(file);
        assertMentions(dtype, "unknown dtype '" + "x".repeat(60) + "…'");
        assertTrue(dtype.getMessage().length() < file.toString().length() + 250, "short: " + dtype.getMessage());
        SafetensorsWriter.writeRaw(file, "{\"__metadata__\":{\"a\\nb\":1}}", new byte[0]);
        assertMentions(openFails(file), "__metadata__ entry 'a\\u000ab'");
        SafetensorsWriter.writeRaw(file, "{\"w\":{\"dtype\":\"U8\",\"shape\":[" + "1,".repeat(1000) + "-1],"
                + "\"data_offsets\":[0,1]}}", new byte[1]);
        FsException shape = openFails(file);
        assertMentions(shape, "[1, 1, 1, 1, 1, 1, 1, 1, … (1001 dimensions)]", "negative dimension");
    }
}
