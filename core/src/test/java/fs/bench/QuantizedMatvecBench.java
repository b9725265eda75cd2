package fs.bench;

import fs.backend.Buffer;
import fs.backend.cpu.VectorBackend;
import fs.backend.Weight;
import fs.tensor.DType;
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
 * One decode sweep (every one-row matmul of a Qwen3-0.6B forward pass, lm_head included: about 600 M weights) with
 * the weights stored in a quantized format, read in place. The score is sweeps/s, the ceiling the matmuls put on
 * decode tok/s; {@code bytes} is the weight bytes read per second, to set against the machine's read bandwidth
 * ({@link MemoryBandwidthBench}). BF16 is there as the unquantized reference.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 4)
@Measurement(iterations = 3, time = 5)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
        "-Xmx2g"})
public class QuantizedMatvecBench {
    @Param({"Q8_0", "Q4_0", "BF16"})
    public DType dtype;

    @Param({"1", "2"})
    public int threads;

    private VectorBackend backend;
    private Qwen3SizedWeights weights;
    private Buffer input;
    private Buffer output;
    private long bytesPerSweep;

    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Work {
        public long bytes;
    }

    @Setup(Level.Trial)
    public void setUp() {
        backend = new VectorBackend(threads);
        weights = new Qwen3SizedWeights(backend, dtype);
        input = backend.allocate(Qwen3SizedWeights.INTERMEDIATE);
        output = backend.allocate(Qwen3SizedWeights.VOCAB);
        bytesPerSweep = dtype.rowBytes(weights.parameterCount());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        backend.close();
        weights.close();
    }

    @Benchmark
    public void decode(Work work) {
        for (Weight[] layer : weights.layers) {
            for (Weight w : layer) backend.matmul(input, w, output, 1);
        }
        backend.matmul(input, weights.lmHead, output, 1);
        work.bytes += bytesPerSweep;
    }
}
