package fs.gguf;

import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.quant.ReferenceDequantizer;
import fs.tensor.DType;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Byte-mutation fuzzing of the GGUF reader. The contract, for any bytes: {@link GgufFile#open} either loads the file,
 * and then every row of every tensor decodes without error (so validation made the slices safe), or throws an
 * FsException whose one-line message names the file; never another exception, never more than 2 s, never memory out
 * of proportion to the file (each case's allocation is measured). Deterministic: fixed seeds, fixed case count. A
 * longer run: {@code mvn -pl java test -Dtest=GgufFuzzTest -Dgguf.fuzz.cases=200000 -Dgguf.fuzz.seed=7}; a failure
 * prints the seed and case to replay.
 */
class GgufFuzzTest {
    private static final int CASES = Integer.getInteger("gguf.fuzz.cases", 2000);
    private static final long SEED = Long.getLong("gguf.fuzz.seed", 20261201L);
    private static final long MAX_NANOS_PER_CASE = 2_000_000_000L;
    /** Generous for a few-KB file (a real parse of one allocates some tens of KB); a claimed count would need GBs. */
    private static final long MAX_ALLOCATED_BYTES_PER_CASE = 32L << 20;
    private static final long[] INTERESTING = {
        0, 1, 2, 3, 4, 5, 13, 16, 31, 32, 33, 255, 256, 4096, 65535, Integer.MAX_VALUE, 1L << 31, 0xFFFFFFFFL,
        1L << 32, 1L << 40, 1L << 62, Long.MAX_VALUE, Long.MIN_VALUE, -1, -32
    };

    @TempDir
    Path dir;

    /** Well-formed files exercising every value type, nested arrays, alignment and several tensor types. */
    private static List<byte[]> seeds() {
        Random random = new Random(1);
        byte[] q8 = new byte[2 * 34];
        byte[] q4k = new byte[2 * 144];
        byte[] iq2 = new byte[66];
        byte[] f32 = new byte[4 * 8];
        for (byte[] data : List.of(q8, q4k, iq2, f32)) random.nextBytes(data);
        GgufWriter full = new GgufWriter()
                .string("general.architecture", "qwen3").u32("qwen3.block_count", 2).u64("qwen3.context_length", 64)
                .u8("u8", 7).i8("i8", -7).u16("u16", 700).i16("i16", -700).i32("i32", -70000).i64("i64", -1)
                .f32("f32", 0.5f).f64("f64", 1e-300).bool("flag", true)
                .array("tokenizer.ggml.tokens", GgufValueType.STRING, "a", "bb", "ccc", "é")
                .array("tokenizer.ggml.scores", GgufValueType.FLOAT32, 0.5f, -1f, 2f, 0f)
                .array("nested", GgufValueType.ARRAY, GgufWriter.array(GgufValueType.INT32, 1, 2, 3),
                        GgufWriter.array(GgufValueType.BOOL, true))
                .tensor("token_embd.weight", DType.Q8_0, new long[] {32, 2}, q8)
                .tensor("blk.0.ffn_up.weight", DType.Q4_K, new long[] {256, 2}, q4k)
                .tensor("blk.0.ffn_down.weight", DType.IQ2_XXS, new long[] {256, 1}, iq2)
                .tensor("output_norm.weight", DType.F32, new long[] {8}, f32);
        GgufWriter aligned = new GgufWriter().version(2).alignment(64).string("general.name", "v2")
                .tensor("a", DType.F32, new long[] {4, 2}, f32)
                .tensor("b", DType.Q8_0, new long[] {32, 1, 2}, q8);
        return List.of(full.bytes(), aligned.bytes());
    }

    @Test
    void mutatedFilesLoadOrFailWithOneLineNamingTheFile() throws Exception {
        List<byte[]> seeds = seeds();
        Random random = new Random(SEED);
        Path file = dir.resolve("fuzz.gguf");
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        int loaded = 0;
        for (int c = 0; c < CASES; c++) {
            byte[] bytes = mutate(seeds.get(c % seeds.size()), random);
            GgufWriter.write(file, bytes);
            long allocatedBefore = threads.getCurrentThreadAllocatedBytes();
            long start = System.nanoTime();
            try {
                loaded += openAndDecode(file) ? 1 : 0;
            } catch (Throwable e) {
                throw new AssertionError("case " + c + " (seed " + SEED + ") broke the contract: " + e, e);
            }
            long nanos = System.nanoTime() - start;
            long allocated = threads.getCurrentThreadAllocatedBytes() - allocatedBefore;
            assertTrue(nanos < MAX_NANOS_PER_CASE, "case " + c + " (seed " + SEED + ") took " + nanos / 1e9 + " s");
            assertTrue(allocated < MAX_ALLOCATED_BYTES_PER_CASE,
                    "case " + c + " (seed " + SEED + ") allocated " + allocated + " bytes for " + bytes.length);
        }
        // Both outcomes must occur, or the mutations are too weak (all load) or too blunt (none do).
        assertTrue(loaded > CASES / 50 && loaded < CASES - CASES / 50, loaded + " of " + CASES + " loaded");
    }

    /** True when the file loaded; an FsException must be one line naming the file; anything else propagates. */
    private static boolean openAndDecode(Path file) {
        try (GgufFile gguf = GgufFile.open(file)) {
            for (GgufTensor tensor : gguf.tensors()) {
                // An empty tensor may claim 2^40 rows of nothing, or rows wider than an array: there is nothing to read.
                if (tensor.data().byteSize() == 0) continue;
                float[] row = new float[Math.toIntExact(tensor.columns())];
                for (long r = 0; r < tensor.rows(); r++) ReferenceDequantizer.decode(tensor.type(), tensor.row(r), row);
            }
            gguf.metadata().values().values().forEach(GgufValue::describe);
            return true;
        } catch (FsException e) {
            String message = e.getMessage();
            if (!message.startsWith(file.toString()) || message.contains("\n")) {
                throw new AssertionError("not one line naming the file: " + message);
            }
            return false;
        }
    }

    private static byte[] mutate(byte[] seed, Random random) {
        byte[] bytes = seed.clone();
        int mutations = 1 + random.nextInt(3);
        for (int m = 0; m < mutations && bytes.length > 8; m++) {
            int at = random.nextInt(bytes.length);
            switch (random.nextInt(6)) {
                case 0 -> bytes[at] ^= (byte) (1 << random.nextInt(8));
                case 1 -> bytes[at] = (byte) INTERESTING[random.nextInt(INTERESTING.length)];
                case 2 -> overwrite(bytes, at, INTERESTING[random.nextInt(INTERESTING.length)], 4);
                case 3 -> overwrite(bytes, at, INTERESTING[random.nextInt(INTERESTING.length)], 8);
                case 4 -> bytes = Arrays.copyOf(bytes, at);
                default -> { // delete or duplicate a short run, shifting everything after it
                    int length = Math.min(1 + random.nextInt(16), bytes.length - at);
                    byte[] run = Arrays.copyOfRange(bytes, at, at + length);
                    byte[] rest = Arrays.copyOfRange(bytes, at + length, bytes.length);
                    ByteBuffer out = ByteBuffer.allocate(bytes.length + (random.nextBoolean() ? length : -length));
                    out.put(bytes, 0, at);
                    if (out.remaining() >= run.length * 2 + rest.length) out.put(run).put(run);
                    out.put(rest);
                    bytes = out.array();
                }
            }
        }
        return bytes;
    }

    /** Writes the low {@code width} bytes of {@code value} little-endian at {@code at}, clipped to the array. */
    private static void overwrite(byte[] bytes, int at, long value, int width) {
        byte[] le = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
        for (int i = 0; i < width && at + i < bytes.length; i++) bytes[at + i] = le[i];
    }
}
