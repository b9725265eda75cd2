package fs.fuzz;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Runs one loader over a stream of mutated inputs and holds it to {@link LoaderContract}. Inputs run on a worker
 * thread, each watched against {@link #TIME_LIMIT_SECONDS}: a loader that loops forever or crawls is caught, not
 * waited for. The inputs follow from a fixed seed, so a run is the same every time; CI runs a short one,
 * {@code -Dfs.fuzz.tries=N} a long one, {@code -Dfs.fuzz.seconds=T} bounds each target's time, and
 * {@code -Dfs.fuzz.seed=S} gives another sequence. Every distinct failure keeps
 * its first input under target/fuzz-failures, and the campaign fails at its end listing them all.
 */
public final class FuzzCampaign {
    public static final int TIME_LIMIT_SECONDS = 2;
    /** A stuck worker thread cannot be stopped, only abandoned: after this many, the rest of the run would crawl. */
    private static final int MAX_HANGS = 3;

    /** Loads one input: the target writes it where its loader reads it, then calls the loader. */
    @FunctionalInterface
    public interface Loader {
        void load(byte[] input) throws Exception;
    }

    /** Makes the inputs of a run, each from the random source alone. */
    @FunctionalInterface
    public interface Inputs {
        byte[] next(SplittableRandom random);
    }

    /**
     * @param name names the target in the figures and in saved failure inputs
     * @param fileName what every refusal must name (the file the input was written to)
     */
    public record Target(String name, String fileName, Inputs inputs, Loader loader) {}

    /** What a run did: the figures docs/RELIABILITY.md records. */
    public record Figures(String target, long inputs, long loaded, long refused, int distinctRefusals, long hangs,
            Map<String, String> failures, double seconds) {
        @Override
        public String toString() {
            return String.format("fuzz %s: %,d inputs (%,d loaded, %,d refused with %,d distinct messages), %d hangs,"
                            + " %d distinct failures, %.1f s, %,.0f inputs/s",
                    target, inputs, loaded, refused, distinctRefusals, hangs, failures.size(), seconds,
                    inputs / Math.max(seconds, 1e-9));
        }
    }

    private FuzzCampaign() {}

    /** Runs the target for {@code fs.fuzz.tries} inputs, else {@code ciTries}, and fails on any broken promise. */
    public static Figures runAndCheck(Target target, int ciTries) {
        long tries = Long.getLong("fs.fuzz.tries", ciTries);
        long seed = Long.getLong("fs.fuzz.seed", (long) target.name().hashCode());
        long seconds = Long.getLong("fs.fuzz.seconds", Long.MAX_VALUE / 1_000_000_000L);
        Figures figures = run(target, tries, seed, TimeUnit.SECONDS.toNanos(seconds));
        System.out.println(figures);
        if (!figures.failures().isEmpty()) {
            StringBuilder report = new StringBuilder(figures.toString()).append(" (seed ").append(seed).append(')');
            figures.failures().forEach((signature, input) -> report.append("\n  ").append(signature).append(" -> ").append(input));
            fail(report.toString());
        }
        return figures;
    }

    /** Stops after {@code tries} inputs or once {@code budgetNanos} have passed, whichever comes first. */
    static Figures run(Target target, long tries, long seed, long budgetNanos) {
        long start = System.nanoTime();
        Run run = new Run(target, tries, seed, start, budgetNanos);
        // One worker loads input after input while this thread watches the clock: no hand-over per input, which on a
        // busy machine would cost a wait for a core each time. A worker stuck past the limit is abandoned (a thread
        // cannot be stopped) and a new one carries on with the next input.
        while (!run.done()) {
            int generation = run.generation();
            Thread worker = Thread.ofPlatform().daemon().name("fuzz-worker").start(() -> run.work(generation));
            try {
                while (worker.isAlive()) {
                    worker.join(100);
                    if (run.abandonIfStuck()) {
                        worker.interrupt();
                        break;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        return run.figures((System.nanoTime() - start) / 1e9);
    }

    /** The state of one campaign, shared by its worker (one at a time, bar abandoned ones) and the watching thread. */
    private static final class Run {
        private final Target target;
        private final long tries;
        private final long seed;
        private final long start;
        private final long budgetNanos;
        private final SplittableRandom random;
        private final Map<String, String> failures = new LinkedHashMap<>();
        private final Set<String> refusals = new HashSet<>();
        private long next;
        private long loaded;
        private long refused;
        private long hangs;
        /** Raised when a worker is abandoned: an abandoned worker that comes back finds it changed and stops. */
        private int generation;
        private boolean loading;
        private long loadingSince;
        private long loadingIndex;
        private byte[] loadingInput;

        Run(Target target, long tries, long seed, long start, long budgetNanos) {
            this.target = target;
            this.tries = tries;
            this.seed = seed;
            this.start = start;
            this.budgetNanos = budgetNanos;
            this.random = new SplittableRandom(seed);
        }

        synchronized boolean done() {
            return next >= tries || hangs >= MAX_HANGS || (next % 1024 == 0 && System.nanoTime() - start > budgetNanos);
        }

        synchronized int generation() {
            return generation;
        }

        void work(int myGeneration) {
            while (true) {
                byte[] input;
                synchronized (this) {
                    if (myGeneration != generation || done()) return;
                    loadingIndex = next++;
                    input = target.inputs().next(random);
                    loadingInput = input;
                    loadingSince = System.nanoTime();
                    loading = true;
                }
                Throwable thrown = null;
                try {
                    target.loader().load(input);
                } catch (Throwable e) {
                    thrown = e;
                }
                synchronized (this) {
                    if (myGeneration != generation) return;
                    loading = false;
                    record(input, thrown);
                }
            }
        }

        private void record(byte[] input, Throwable thrown) {
            String violation = LoaderContract.violation(thrown, target.fileName());
            if (violation != null) {
                String signature = signature(violation, thrown);
                if (!failures.containsKey(signature)) failures.put(signature, save(target.name(), seed, loadingIndex, input));
            } else if (thrown == null) {
                loaded++;
            } else {
                refused++;
                refusals.add(thrown.getMessage().replaceAll("[0-9]+", "#"));
            }
        }

        synchronized boolean abandonIfStuck() {
            if (!loading || System.nanoTime() - loadingSince < TimeUnit.SECONDS.toNanos(TIME_LIMIT_SECONDS)) return false;
            hangs++;
            failures.putIfAbsent("over " + TIME_LIMIT_SECONDS + " s", save(target.name(), seed, loadingIndex, loadingInput));
            generation++;
            loading = false;
            return true;
        }

        synchronized Figures figures(double seconds) {
            return new Figures(target.name(), next, loaded, refused, refusals.size(), hangs, failures, seconds);
        }
    }

    /** One failure however many inputs show it: its exception type and where it was thrown, or its message's shape. */
    private static String signature(String violation, Throwable thrown) {
        if (thrown instanceof fs.FsException) {
            String shape = violation.replaceAll("[0-9]+", "#");
            return shape.startsWith("a message of ") ? shape.substring(0, Math.min(shape.length(), 90)) : shape;
        }
        StackTraceElement[] stack = thrown.getStackTrace();
        String where = stack.length == 0 ? "?" : stack[0].toString();
        for (StackTraceElement frame : stack) {
            if (frame.getClassName().startsWith("fs.")) {
                where = frame.toString();
                break;
            }
        }
        return thrown.getClass().getName() + " at " + where;
    }

    private static String save(String target, long seed, long index, byte[] input) {
        try {
            Path dir = Path.of("target", "fuzz-failures");
            Files.createDirectories(dir);
            Path file = dir.resolve(target + "-" + seed + "-" + index + ".bin");
            Files.write(file, input);
            return file.toAbsolutePath().toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
