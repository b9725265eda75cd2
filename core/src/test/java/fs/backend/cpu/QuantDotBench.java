package fs.backend.cpu;

import fs.tensor.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One thread's matrix-vector product of a quantized weight of Qwen3-0.6B's down_proj shape (1024 rows of 3072), row
 * by row through {@link RowFormat#dot}, as decode does. The score times the matrix's bytes (ROWS × rowBytes) is the
 * rate of weight bytes read, to compare with MemoryBandwidthBench; {@code bytes / cpuNanos} is the same per
 * CPU-second ({@link Traffic}). {@code cached}: the same matrix every call, so it stays in L2/L3 and the
 * figure is the kernel's arithmetic speed; {@code streamed}: a different copy each call out of 1 GiB of them, far
 * larger than the caches, as a whole model's weights are. The blocks are random bytes with normal f16 scales (the
 * kernels' work does not depend on the values). Lives in fs.backend.cpu because the row formats are package-private.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
public class QuantDotBench {
    private static final int ROWS = 1024, K = 3072;
    private static final long STREAMED_BYTES = 1L << 30;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final Map<DType, RowFormat> FORMATS = Map.of(
            DType.Q8_0, Q8_0Rows.INSTANCE, DType.Q4_0, Q4_0Rows.INSTANCE, DType.Q2_K, new Q2KRows(), DType.Q3_K, new Q3KRows(), DType.Q4_K, new Q4KRows(),
            DType.Q5_K, new Q5KRows(), DType.Q6_K, new Q6KRows(), DType.IQ2_XXS, new Iq2XxsRows());

    @Param({"Q4_K", "Q6_K", "Q8_0", "Q4_0", "Q2_K", "Q3_K", "Q5_K", "IQ2_XXS"})
    public DType type;

    @Param({"cached", "streamed"})
    public String residence;

    private Arena arena;
    private MemorySegment weights;
    private RowFormat format;
    private long rowBytes;
    private long matrixBytes;
    private int copies;
    private int next;
    private final float[] x = new float[K];
    private final float[] out = new float[ROWS];
    private final float[] lanes = new float[MatmulKernels.LANES_SCRATCH];

    /**
     * Totals per iteration: the weight bytes read and the CPU time the calls took, whose ratio is the rate per
     * CPU-second. On a machine shared with other work the wall-clock score counts the time this thread waited for
     * a core too, so the ratio is the fairer figure of the kernel (though caches are still shared).
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Traffic {
        public long bytes;
        public long cpuNanos;
    }

    @Setup(Level.Trial)
    public void setUp() {
        format = FORMATS.get(type);
        rowBytes = type.rowBytes(K);
        matrixBytes = rowBytes * ROWS;
        copies = residence.equals("cached") ? 1 : (int) (STREAMED_BYTES / matrixBytes);
        arena = Arena.ofShared();
        weights = arena.allocate(matrixBytes * copies, 64);
        SplittableRandom random = new SplittableRandom(42);
        for (long i = 0; i + 8 <= weights.byteSize(); i += 8) weights.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
        long[] halves = switch (type) {
            case Q2_K -> new long[] {80, 82};
            case Q3_K -> new long[] {108};
            case Q6_K -> new long[] {208};
            case Q8_0, Q4_0 -> new long[] {0};
            default -> new long[] {0, 2}; // Q4_K, Q5_K: d, dmin; IQ2_XXS: d (and its first grid byte, any value)
        };
        for (long block = 0; block < weights.byteSize() / type.blockBytes(); block++) {
            for (long at : halves) {
                weights.set(ValueLayout.JAVA_SHORT_UNALIGNED, block * type.blockBytes() + at,
                        Float.floatToFloat16((float) random.nextDouble(0.001, 0.01)));
            }
        }
        for (int i = 0; i < K; i++) x[i] = (float) random.nextGaussian();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public float[] matVec(Traffic traffic) {
        long base = matrixBytes * next;
        next = (next + 1) % copies;
        long start = THREADS.getCurrentThreadCpuTime();
        for (int r = 0; r < ROWS; r++) out[r] = format.dot(weights, base + r * rowBytes, x, 0, K, lanes);
        traffic.cpuNanos += THREADS.getCurrentThreadCpuTime() - start;
        traffic.bytes += matrixBytes;
        return out;
    }
}
