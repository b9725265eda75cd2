package fs.bench;

import fs.backend.Buffer;
import fs.backend.Weight;
import fs.backend.cpu.VectorBackend;
import java.util.concurrent.TimeUnit;
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
 * Every matmul of one Qwen3-0.6B forward pass on random bf16 weights: the ceiling the matmuls alone put on tok/s.
 * {@code decode} is one token (rows = 1, lm_head included): its score is decode tok/s. {@code prefill128} is a
 * 128-token prompt (the layers on 128 rows, lm_head on the last row only): multiply its score by 128 for prefill
 * tok/s.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 4)
@Measurement(iterations = 3, time = 5)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
        "-Xmx2g"})
public class ModelSweepBench {
    private static final int PROMPT = 128;

    @Param({"1", "2"})
    public int threads;

    private VectorBackend backend;
    private Qwen3SizedWeights weights;
    private Buffer input;
    private Buffer output;

    @Setup(Level.Trial)
    public void setUp() {
        backend = new VectorBackend(threads);
        weights = new Qwen3SizedWeights(backend);
        input = backend.allocate((long) PROMPT * Qwen3SizedWeights.INTERMEDIATE);
        output = backend.allocate((long) PROMPT * Qwen3SizedWeights.VOCAB);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        backend.close();
        weights.close();
    }

    @Benchmark
    public void decode() {
        sweep(1);
    }

    @Benchmark
    public void prefill128() {
        sweep(PROMPT);
    }

    private void sweep(int rows) {
        for (Weight[] layer : weights.layers) {
            for (Weight w : layer) backend.matmul(input, w, output, rows);
        }
        backend.matmul(input, weights.lmHead, output, 1);
    }
}
