package fs.backend.cpu;

import fs.backend.Buffer;
import fs.backend.Weight;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
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
 * A scheduler's decode step in miniature: {@code rows} input rows (one per stream) against a Qwen3-0.6B MLP's
 * gate and down matrices (3072×1024 and 1024×3072) on one thread, the caller. {@code rowsPerCpuSecond} in
 * {@link Work} is input rows × matrices done per CPU-second of that thread: on a machine shared with other jobs
 * the fairer figure (waiting for a core is not counted). The weights are random blocks with normal f16 scales, 24 MiB
 * of copies of them cycled so that they are read from memory, not cache. Lives in fs.backend.cpu to reach
 * {@link MatmulTask}'s row counts.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
public class FewRowsMatmulBench {
    private static final int HIDDEN = 1024, INTERMEDIATE = 3072, COPIES = 4;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    @Param({"Q4_K", "Q6_K", "BF16"})
    public DType type;

    @Param({"1", "2", "4", "8"})
    public int rows;

    private Arena arena;
    private VectorBackend backend;
    private Weight[] gate, down;
    private Buffer hidden, intermediate, gateOut, downOut;
    private int next;

    /** Per iteration: input rows × matrices done, and the CPU time they took. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Work {
        public long rowMatrices;
        public long cpuNanos;
    }

    @Setup(Level.Trial)
    public void setUp() {
        arena = Arena.ofShared();
        backend = new VectorBackend(1);
        SplittableRandom random = new SplittableRandom(42);
        gate = new Weight[COPIES];
        down = new Weight[COPIES];
        for (int c = 0; c < COPIES; c++) {
            gate[c] = backend.upload(random("gate", INTERMEDIATE, HIDDEN, random));
            down[c] = backend.upload(random("down", HIDDEN, INTERMEDIATE, random));
        }
        hidden = input(rows * HIDDEN, random);
        intermediate = input(rows * INTERMEDIATE, random);
        gateOut = backend.allocate((long) rows * INTERMEDIATE);
        downOut = backend.allocate((long) rows * HIDDEN);
    }

    private Buffer input(int length, SplittableRandom random) {
        Buffer b = backend.allocate(length);
        MemorySegment segment = ((CpuBuffer) b).segment();
        for (int i = 0; i < length; i++) segment.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) random.nextGaussian());
        return b;
    }

    private Tensor random(String name, int n, int k, SplittableRandom random) {
        long rowBytes = type.rowBytes(k), bytes = rowBytes * n;
        MemorySegment data = arena.allocate(bytes, 64);
        for (long i = 0; i + 8 <= bytes; i += 8) {
            long bits = random.nextLong();
            // bf16: each 16-bit lane a normal number (exponent 119..126) of random sign and mantissa.
            if (type == DType.BF16) bits = bits & 0x80FF80FF80FF80FFL | 0x3B003B003B003B00L;
            data.set(ValueLayout.JAVA_LONG_UNALIGNED, i, bits);
        }
        long[] halves = switch (type) {
            case Q6_K -> new long[] {208};
            case Q4_K -> new long[] {0, 2};
            default -> new long[0];
        };
        for (long block = 0; block < bytes / type.blockBytes() && halves.length > 0; block++) {
            for (long at : halves) {
                data.set(ValueLayout.JAVA_SHORT_UNALIGNED, block * type.blockBytes() + at,
                        Float.floatToFloat16((float) random.nextDouble(0.001, 0.01)));
            }
        }
        return new Tensor(name, type, new long[] {n, k}, data);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        backend.close();
        arena.close();
    }

    @Benchmark
    public void step(Work work) {
        int c = next;
        next = (next + 1) % COPIES;
        long start = THREADS.getCurrentThreadCpuTime();
        backend.matmul(hidden, gate[c], gateOut, rows);
        backend.matmul(intermediate, down[c], downOut, rows);
        work.cpuNanos += THREADS.getCurrentThreadCpuTime() - start;
        work.rowMatrices += 2L * rows;
    }
}
