package fs.gguf;

import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.format.ReferenceDequantizer;
import fs.fuzz.FuzzCampaign;
import fs.tensor.DType;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Byte-mutation fuzzing of the GGUF reader, on the shared harness ({@link FuzzCampaign}, held to
 * {@code fs.fuzz.LoaderContract} like every other loader: one FsException line naming the file, within 2 s). On top of
 * that, a file that loads must decode every row of every tensor without error (so validation made the slices safe),
 * and no input may allocate memory out of proportion to the file. See docs/RELIABILITY.md for a longer run.
 */
class GgufFuzzTest {
    /** In CI: about a second. */
    private static final int CI_TRIES = 2000;
    /** Generous for a few-KB file (a real parse of one allocates some tens of KB); a claimed count would need GBs. */
    private static final long MAX_ALLOCATED_BYTES_PER_INPUT = 32L << 20;
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
    void mutatedFilesLoadOrFailWithOneLineNamingTheFile() {
        List<byte[]> seeds = seeds();
        Path file = dir.resolve("fuzz.gguf");
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        FuzzCampaign.Inputs inputs = random -> mutate(seeds.get(random.nextInt(seeds.size())), random);
        FuzzCampaign.Figures figures = FuzzCampaign.runAndCheck(new FuzzCampaign.Target("gguf", "fuzz.gguf", inputs, input -> {
            GgufWriter.write(file, input);
            long allocatedBefore = threads.getCurrentThreadAllocatedBytes();
            try {
                openAndDecode(file);
            } finally {
                long allocated = threads.getCurrentThreadAllocatedBytes() - allocatedBefore;
                if (allocated > MAX_ALLOCATED_BYTES_PER_INPUT) {
                    throw new AssertionError("allocated " + allocated + " bytes for a file of " + input.length);
                }
            }
        }), CI_TRIES);
        // Both outcomes must occur, or the mutations are too weak (all load) or too blunt (none do).
        long loaded = figures.loaded();
        assertTrue(loaded > figures.inputs() / 50 && loaded < figures.inputs() - figures.inputs() / 50,
                loaded + " of " + figures.inputs() + " loaded");
    }

    /** Opens the file and decodes every row; an FsException (the reader's refusal) propagates to the contract. */
    private static void openAndDecode(Path file) {
        try (GgufFile gguf = GgufFile.open(file)) {
            for (GgufTensor tensor : gguf.tensors()) {
                // An empty tensor may claim 2^40 rows of nothing, or rows wider than an array: there is nothing to read.
                if (tensor.data().byteSize() == 0) continue;
                float[] row = new float[Math.toIntExact(tensor.columns())];
                for (long r = 0; r < tensor.rows(); r++) ReferenceDequantizer.decode(tensor.type(), tensor.row(r), row);
            }
            gguf.metadata().values().values().forEach(GgufValue::describe);
        }
    }

    private static byte[] mutate(byte[] seed, SplittableRandom random) {
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
