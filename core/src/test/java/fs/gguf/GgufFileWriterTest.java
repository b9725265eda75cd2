package fs.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.tensor.DType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufFileWriterTest {
    @TempDir
    Path dir;

    private static GgufValue value(GgufValueType type, Object value) {
        return new GgufValue(type, value);
    }

    /** One of every value type at its extremes, and arrays of every element type (nested ones too). */
    private static Map<String, GgufValue> everyValueType() {
        Map<String, GgufValue> m = new LinkedHashMap<>();
        m.put("u8", value(GgufValueType.UINT8, 255L));
        m.put("i8", value(GgufValueType.INT8, -128L));
        m.put("u16", value(GgufValueType.UINT16, 65535L));
        m.put("i16", value(GgufValueType.INT16, -32768L));
        m.put("u32", value(GgufValueType.UINT32, 4294967295L));
        m.put("i32", value(GgufValueType.INT32, (long) Integer.MIN_VALUE));
        m.put("u64", value(GgufValueType.UINT64, -1L)); // 2^64 - 1, its bits
        m.put("i64", value(GgufValueType.INT64, Long.MIN_VALUE));
        m.put("f32", value(GgufValueType.FLOAT32, (double) 1.1f));
        m.put("f64", value(GgufValueType.FLOAT64, 0.1));
        m.put("yes", value(GgufValueType.BOOL, true));
        m.put("no", value(GgufValueType.BOOL, false));
        m.put("text", value(GgufValueType.STRING, "héllo ✓ \uD83D\uDE00"));
        m.put("empty text", value(GgufValueType.STRING, ""));
        m.put("strings", value(GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, new String[] {"a", "", "ü"})));
        m.put("i32s", value(GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, new long[] {7, -8})));
        m.put("u8s", value(GgufValueType.ARRAY, new GgufArray(GgufValueType.UINT8, new long[] {0, 255})));
        m.put("u64s", value(GgufValueType.ARRAY, new GgufArray(GgufValueType.UINT64, new long[] {})));
        m.put("f32s", value(GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, new double[] {0.25, -1})));
        m.put("f64s", value(GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT64, new double[] {Math.PI})));
        m.put("bools", value(GgufValueType.ARRAY, new GgufArray(GgufValueType.BOOL, new boolean[] {true, false})));
        m.put("nested", value(GgufValueType.ARRAY, new GgufArray(GgufValueType.ARRAY, new GgufArray[] {
                new GgufArray(GgufValueType.INT16, new long[] {-1, 2}),
                new GgufArray(GgufValueType.STRING, new String[] {"x"})})));
        return m;
    }

    @Test
    void everyValueTypeReadsBackInOrder() {
        Map<String, GgufValue> metadata = everyValueType();
        Path file = dir.resolve("values.gguf");
        try (GgufFileWriter writer = GgufFileWriter.create(file, metadata, List.of())) {
            writer.finish();
        }
        try (GgufFile gguf = GgufFile.open(file)) {
            assertEquals(3, gguf.version());
            assertEquals(List.copyOf(metadata.keySet()), List.copyOf(gguf.metadata().values().keySet()));
            assertEquals(metadata, gguf.metadata().values());
            assertEquals(0, gguf.tensors().size());
        }
    }

    @Test
    void integersThatDoNotFitTheirTypeAreRefused() {
        Path file = dir.resolve("bad.gguf");
        Map<String, GgufValue> metadata = Map.of("u8", value(GgufValueType.UINT8, 256L));
        assertThrows(IllegalArgumentException.class, () -> GgufFileWriter.create(file, metadata, List.of()));
        assertFalse(Files.exists(file));
        assertEquals(List.of(), leftovers());
    }

    /** Random bytes of one tensor's size, seeded by its index so the reader's bytes can be checked. */
    private static byte[] data(GgufFileWriter.TensorInfo tensor, int seed) {
        byte[] bytes = new byte[Math.toIntExact(tensor.bytes())];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    private static List<GgufFileWriter.TensorInfo> manyTensors() {
        List<GgufFileWriter.TensorInfo> tensors = new ArrayList<>();
        DType[] types = {DType.F32, DType.F16, DType.BF16, DType.Q8_0, DType.Q4_0, DType.Q4_K, DType.Q6_K, DType.IQ2_XXS};
        for (int i = 0; i < 150; i++) {
            DType type = types[i % types.length];
            long columns = type.blockElements() * (1 + i % 3);
            long[] shape = switch (i % 4) {
                case 0 -> new long[] {columns};
                case 1 -> new long[] {1 + i % 5, columns};
                case 2 -> new long[] {2, 1 + i % 3, columns};
                default -> new long[] {0, columns}; // no rows: no bytes, and no padding either
            };
            tensors.add(new GgufFileWriter.TensorInfo("blk." + i + ".t", type, shape));
        }
        return tensors;
    }

    @Test
    void manyTensorsWrittenInPiecesReadBackAlignedAndExact() {
        for (Long alignment : new Long[] {null, 64L, 1L}) {
            Map<String, GgufValue> metadata = new LinkedHashMap<>();
            metadata.put("general.architecture", value(GgufValueType.STRING, "test"));
            if (alignment != null) metadata.put("general.alignment", value(GgufValueType.UINT32, alignment));
            List<GgufFileWriter.TensorInfo> tensors = manyTensors();
            Path file = dir.resolve("tensors-" + alignment + ".gguf");
            try (GgufFileWriter writer = GgufFileWriter.create(file, metadata, tensors)) {
                for (int i = 0; i < tensors.size(); i++) {
                    byte[] bytes = data(tensors.get(i), i);
                    // in pieces of 1, 7 and the rest, as a quantizer hands over row ranges
                    int first = Math.min(1, bytes.length);
                    int second = Math.min(7, bytes.length - first);
                    MemorySegment all = MemorySegment.ofArray(bytes);
                    writer.write(all.asSlice(0, first));
                    writer.write(all.asSlice(first, second));
                    writer.write(all.asSlice(first + second));
                }
                writer.finish();
            }
            int expectedAlignment = alignment == null ? 32 : alignment.intValue();
            try (GgufFile gguf = GgufFile.open(file)) {
                assertEquals(expectedAlignment, gguf.alignment());
                assertEquals(0, gguf.dataStart() % expectedAlignment);
                assertEquals(tensors.size(), gguf.tensors().size());
                for (int i = 0; i < tensors.size(); i++) {
                    GgufTensor read = gguf.tensors().get(i);
                    GgufFileWriter.TensorInfo written = tensors.get(i);
                    assertEquals(written.name(), read.name());
                    assertEquals(written.type(), read.type());
                    assertArrayEquals(written.shape(), read.shape());
                    assertEquals(0, read.offset() % expectedAlignment, read.name());
                    assertArrayEquals(data(written, i), read.data().toArray(ValueLayout.JAVA_BYTE), read.name());
                }
                long lastEnd = 0;
                for (GgufTensor tensor : gguf.tensors()) lastEnd = Math.max(lastEnd, tensor.offset() + tensor.data().byteSize());
                // the file ends at the last tensor's data, padded: nothing unaccounted for
                long size = fileSize(file);
                assertEquals(Math.ceilDiv(gguf.dataStart() + lastEnd, expectedAlignment) * expectedAlignment, size);
            }
        }
    }

    @Test
    void aPieceRunningPastItsTensorAndAnEarlyFinishAreRefused() {
        var tensor = new GgufFileWriter.TensorInfo("t", DType.F32, new long[] {2, 4});
        Path file = dir.resolve("t.gguf");
        try (GgufFileWriter writer = GgufFileWriter.create(file, Map.of(), List.of(tensor))) {
            assertThrows(IllegalStateException.class, () -> writer.write(MemorySegment.ofArray(new byte[33])));
            writer.write(MemorySegment.ofArray(new byte[16]));
            assertThrows(IllegalStateException.class, writer::finish);
        }
        assertFalse(Files.exists(file));
        assertEquals(List.of(), leftovers());
    }

    @Test
    void anAbandonedFileLeavesTheTargetAsItWas() throws IOException {
        Path file = dir.resolve("out.gguf");
        Files.writeString(file, "the previous file");
        var tensor = new GgufFileWriter.TensorInfo("t", DType.F32, new long[] {1024});
        RuntimeException failure = assertThrows(RuntimeException.class, () -> {
            try (GgufFileWriter writer = GgufFileWriter.create(file, Map.of(), List.of(tensor))) {
                writer.write(MemorySegment.ofArray(new byte[100]));
                assertEquals(1, leftovers().size(), "the data goes to a temporary file beside the target");
                throw new RuntimeException("interrupted");
            }
        });
        assertEquals("interrupted", failure.getMessage());
        assertEquals("the previous file", Files.readString(file));
        assertEquals(List.of(), leftovers());
    }

    @Test
    void aFinishedFileReplacesTheTarget() throws IOException {
        Path file = dir.resolve("out.gguf");
        Files.writeString(file, "the previous file");
        try (GgufFileWriter writer = GgufFileWriter.create(file, Map.of(), List.of())) {
            writer.finish();
        }
        try (GgufFile gguf = GgufFile.open(file)) {
            assertTrue(gguf.metadata().values().isEmpty());
        }
        assertEquals(List.of(), leftovers());
    }

    /** Files in the directory other than finished .gguf files: the writer's temporaries. */
    private List<Path> leftovers() {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".partial")).toList();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static long fileSize(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
