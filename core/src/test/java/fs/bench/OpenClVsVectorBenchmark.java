package fs.bench;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.KvCache;
import fs.backend.Rope;
import fs.backend.RowPositions;
import fs.backend.Weight;
import fs.backend.cpu.VectorBackend;
import fs.backend.opencl.OpenCl;
import fs.backend.opencl.OpenClBackend;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * The OpenCL backend on an OpenCL CPU device (PoCL) against the Vector API backend on the same cores, op by op at
 * Qwen3-0.6B's shapes: bf16 matvecs (decode), 128-row bf16 matmuls (prefill), GQA attention (16 query heads on 8
 * KV heads of 128) and RoPE of q. Prints the median wall and process CPU time per op of each backend (the machine may
 * be shared, so /proc/loadavg is printed before and after) and the bytes the OpenCL backend allocates on the Java heap
 * per op, which should be none.
 *
 * <p>Run (not a test): {@code java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -cp
 * core/target/classes:core/target/test-classes:bindings/target/classes fs.bench.OpenClVsVectorBenchmark [threads]
 * [samples] [name filter]}.
 */
public final class OpenClVsVectorBenchmark {
    private static final int PREFILL_ROWS = 128;
    private static final int HEADS = 16, KV_HEADS = 8, HEAD_DIM = 128;
    /** [N, K] of the matmuls: k/v, q, o, gate/up, down. */
    private static final int[][] SHAPES = {{1024, 1024}, {2048, 1024}, {1024, 2048}, {3072, 1024}, {1024, 3072}};

    /** One op, set up on one backend with its inputs; it may only enqueue the work. */
    private interface Op {
        void run();
    }

    private static final long WARMUP_NANOS = 2_000_000_000L;
    private static final float[] SINK = new float[1];
    private static final com.sun.management.ThreadMXBean THREAD =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    /** Only ops whose name contains this run (the third argument). */
    private static String filter = "";

    private OpenClVsVectorBenchmark() {}

    public static void main(String[] args) throws IOException {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int samples = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        filter = args.length > 2 ? args[2] : "";
        OpenCl.Device device = switch (OpenCl.select(true, null)) {
            case OpenCl.Selection.Selected s -> s.device();
            case OpenCl.Selection.NotSelected n -> throw new IllegalStateException(n.reason());
        };
        System.out.println("loadavg before: " + loadavg());
        try (Arena arena = Arena.ofShared(); VectorBackend vector = new VectorBackend(threads);
                OpenClBackend opencl = new OpenClBackend(device)) {
            System.out.println("A: " + vector.description());
            System.out.println("B: " + opencl.description());
            System.out.printf(Locale.ROOT, "%-34s %10s %10s %10s %10s %7s %9s%n", "op (ms per op)", "A wall",
                    "A cpu", "B wall", "B cpu", "B/A", "B alloc");
            SplittableRandom random = new SplittableRandom(1);
            for (int[] shape : SHAPES) {
                Tensor w = bf16(arena, random, shape[0], shape[1]);
                float[] x = floats(random, PREFILL_ROWS * shape[1]);
                for (int rows : new int[] {1, PREFILL_ROWS}) {
                    String name = (rows == 1 ? "decode" : "prefill " + rows + " rows") + " bf16 " + shape[0] + "x"
                            + shape[1];
                    report(name, samples, rows == 1 ? 20 : 1, vector, opencl, backend -> {
                        Weight weight = backend.upload(w);
                        Buffer in = input(backend, arena, x);
                        Buffer out = backend.allocate((long) PREFILL_ROWS * shape[0]);
                        return () -> backend.matmul(in, weight, out, rows);
                    });
                }
            }
            int kvDim = KV_HEADS * HEAD_DIM;
            for (int[] attention : new int[][] {{1, 1023}, {PREFILL_ROWS, 0}, {PREFILL_ROWS, 512}}) {
                int rows = attention[0], startPos = attention[1];
                int positions = startPos + rows;
                float[] keys = floats(random, positions * kvDim);
                float[] values = floats(random, positions * kvDim);
                float[] q = floats(random, rows * HEADS * HEAD_DIM);
                String name = "attention " + rows + " rows at " + startPos;
                report(name, samples, rows == 1 ? 20 : 1, vector, opencl, backend -> {
                    KvCache cache = backend.allocateKvCache(1, 1, positions, KV_HEADS, HEAD_DIM);
                    backend.storeKv(cache, 0, input(backend, arena, keys), input(backend, arena, values),
                            RowPositions.run(0, 0, positions));
                    Buffer qs = input(backend, arena, q);
                    Buffer out = backend.allocate(q.length);
                    RowPositions placed = RowPositions.run(0, startPos, rows);
                    return () -> backend.attention(qs, cache, 0, out, placed, HEADS);
                });
            }
            float[] queries = floats(random, PREFILL_ROWS * HEADS * HEAD_DIM);
            Rope rope = Rope.plain(HEAD_DIM, 1_000_000);
            for (int rows : new int[] {1, PREFILL_ROWS}) {
                report("rope q " + rows + " rows", samples, rows == 1 ? 20 : 1, vector, opencl, backend -> {
                    Buffer x = input(backend, arena, queries);
                    RowPositions placed = RowPositions.run(0, 0, rows);
                    return () -> backend.rope(x, placed, HEADS, rope);
                });
            }
        }
        System.out.println("loadavg after: " + loadavg());
    }

    /**
     * Times {@code perSample} back-to-back ops per sample (then one wait) on both backends, interleaving their samples
     * after a warm-up of {@link #WARMUP_NANOS} each. Wall time is the median over samples; process CPU time (all
     * threads, PoCL's included) is the total over samples, as the OS counts it in coarse ticks.
     */
    private static void report(String name, int samples, int perSample, Backend a, Backend b,
            Function<Backend, Op> setup) {
        if (!name.contains(filter)) return;
        Op opA = setup.apply(a);
        Op opB = setup.apply(b);
        Buffer probeA = a.allocate(1), probeB = b.allocate(1);
        warmUp(opA, a, probeA, perSample);
        warmUp(opB, b, probeB, perSample);
        double[] wallA = new double[samples], wallB = new double[samples];
        long cpuA = 0, cpuB = 0, allocatedB = 0;
        for (int s = 0; s < samples; s++) {
            long cpu0 = processCpuNanos();
            wallA[s] = sample(opA, a, probeA, perSample);
            long cpu1 = processCpuNanos();
            long allocated = THREAD.getCurrentThreadAllocatedBytes();
            wallB[s] = sample(opB, b, probeB, perSample);
            allocatedB += THREAD.getCurrentThreadAllocatedBytes() - allocated;
            cpuB += processCpuNanos() - cpu1;
            cpuA += cpu1 - cpu0;
        }
        double ops = (double) samples * perSample;
        double medianA = median(wallA), medianB = median(wallB);
        System.out.printf(Locale.ROOT, "%-34s %10.3f %10.3f %10.3f %10.3f %7.2f %9.0f%n", name, medianA,
                cpuA / 1e6 / ops, medianB, cpuB / 1e6 / ops, medianB / medianA, allocatedB / ops);
    }

    private static void warmUp(Op op, Backend backend, Buffer probe, int perSample) {
        long start = System.nanoTime();
        for (int i = 0; i < 3 || System.nanoTime() - start < WARMUP_NANOS; i++) sample(op, backend, probe, perSample);
    }

    /** Wall milliseconds per op of {@code perSample} ops and one wait for them. */
    private static double sample(Op op, Backend backend, Buffer probe, int perSample) {
        long start = System.nanoTime();
        for (int i = 0; i < perSample; i++) op.run();
        backend.read(probe, 0, SINK); // waits for the queue of an asynchronous backend
        return (System.nanoTime() - start) / 1e6 / perSample;
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static Buffer input(Backend backend, Arena arena, float[] values) {
        MemorySegment data = arena.allocate((long) values.length * Float.BYTES, 64);
        MemorySegment.copy(values, 0, data, ValueLayout.JAVA_FLOAT, 0, values.length);
        Weight staging = backend.upload(new Tensor("input", DType.F32, new long[] {1, values.length}, data));
        Buffer buffer = backend.allocate(values.length);
        backend.embed(staging, new int[] {0}, buffer);
        return buffer;
    }

    private static Tensor bf16(Arena arena, SplittableRandom random, int rows, int columns) {
        MemorySegment data = arena.allocate((long) rows * columns * 2, 64);
        for (long i = 0; i < (long) rows * columns; i++) {
            float v = (float) (random.nextDouble(-1, 1) * 0.1);
            data.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) (Float.floatToRawIntBits(v) >>> 16));
        }
        return new Tensor("w", DType.BF16, new long[] {rows, columns}, data);
    }

    private static float[] floats(SplittableRandom random, int length) {
        float[] values = new float[length];
        for (int i = 0; i < length; i++) values[i] = (float) random.nextDouble(-1, 1);
        return values;
    }

    private static String loadavg() throws IOException {
        return Files.readString(Path.of("/proc/loadavg")).strip();
    }
}
