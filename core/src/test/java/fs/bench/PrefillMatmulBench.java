package fs.bench;

import fs.backend.Buffer;
import fs.backend.Weight;
import fs.backend.cpu.VectorBackend;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
 * One batched matmul (128 or 512 rows) against a bf16 or f32 weight of Qwen3-0.6B's shapes (gate/up [3072, 1024], down [1024, 3072]).
 * The {@code flops} counter is the achieved rate in FLOP/s (2·rows·N·K per call).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
public class PrefillMatmulBench {
    @Param({"128", "512"})
    public int rows;

    @Param({"1", "2"})
    public int threads;

    @Param({"3072x1024", "1024x3072"})
    public String shape;

    @Param({"BF16", "F32"})
    public DType dtype;

    private VectorBackend backend;
    private Arena arena;
    private Weight weight;
    private Buffer input;
    private Buffer output;
    private long flopsPerCall;

    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Work {
        public long flops;
    }

    @Setup(Level.Trial)
    public void setUp() {
        String[] dims = shape.split("x");
        int n = Integer.parseInt(dims[0]), k = Integer.parseInt(dims[1]);
        backend = new VectorBackend(threads);
        arena = Arena.ofShared();
        MemorySegment data = arena.allocate(n * dtype.rowBytes(k), 64);
        SplittableRandom random = new SplittableRandom(42);
        for (long i = 0; i < (long) n * k; i++) {
            float v = (float) (random.nextDouble() - 0.5);
            if (dtype == DType.BF16) data.set(ValueLayout.JAVA_SHORT, 2 * i, (short) (Float.floatToIntBits(v) >>> 16));
            else data.set(ValueLayout.JAVA_FLOAT, 4 * i, v);
        }
        weight = backend.upload(new Tensor("w", dtype, new long[] {n, k}, data));
        input = backend.allocate((long) rows * k);
        output = backend.allocate((long) rows * n);
        flopsPerCall = 2L * rows * n * k;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        backend.close();
        arena.close();
    }

    @Benchmark
    public void matmul(Work work) {
        backend.matmul(input, weight, output, rows);
        work.flops += flopsPerCall;
    }
}
