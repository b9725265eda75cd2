package fs.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * The roofline: how fast one and two threads can stream a 1 GiB off-heap segment (far larger than any cache), each
 * thread reading its own half or whole. The {@code bytes} counter is the read bandwidth in bytes per second.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
public class MemoryBandwidthBench {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final long SIZE = 1L << 30;

    @State(Scope.Benchmark)
    public static class Memory {
        Arena arena;
        MemorySegment segment;

        @Setup(Level.Trial)
        public void allocate() {
            arena = Arena.ofShared();
            segment = arena.allocate(SIZE, 64);
            segment.fill((byte) 1);
        }

        @TearDown(Level.Trial)
        public void free() {
            arena.close();
        }
    }

    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Traffic {
        public long bytes;
    }

    @Benchmark
    @Threads(1)
    public float oneThread(Memory memory, Traffic traffic, ThreadParams thread) {
        return readShare(memory.segment, traffic, thread);
    }

    @Benchmark
    @Threads(2)
    public float twoThreads(Memory memory, Traffic traffic, ThreadParams thread) {
        return readShare(memory.segment, traffic, thread);
    }

    private static float readShare(MemorySegment segment, Traffic traffic, ThreadParams thread) {
        long share = SIZE / thread.getThreadCount();
        long from = share * thread.getThreadIndex();
        int step = F.vectorByteSize();
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (long o = from; o < from + share; o += 4L * step) {
            a0 = a0.add(FloatVector.fromMemorySegment(F, segment, o, ByteOrder.LITTLE_ENDIAN));
            a1 = a1.add(FloatVector.fromMemorySegment(F, segment, o + step, ByteOrder.LITTLE_ENDIAN));
            a2 = a2.add(FloatVector.fromMemorySegment(F, segment, o + 2L * step, ByteOrder.LITTLE_ENDIAN));
            a3 = a3.add(FloatVector.fromMemorySegment(F, segment, o + 3L * step, ByteOrder.LITTLE_ENDIAN));
        }
        traffic.bytes += share;
        return a0.add(a1).add(a2).add(a3).lane(0);
    }
}
