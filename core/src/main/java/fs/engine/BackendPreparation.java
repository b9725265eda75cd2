package fs.engine;

import fs.backend.cpu.CpuKernels;
import fs.backend.opencl.OpenCl;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;

/**
 * What making the backend of a {@link BackendChoice} costs before any model is involved: auto's and opencl's look at
 * the OpenCL devices (a tenth of a second or more wherever a driver is installed, PoCL's CPU device included) and,
 * when the CPU is to run the model, its native kernels (libfscpu checked and loaded, a downcall stub generated for
 * each kernel: a quarter of a second on 2 cores). {@link #start} begins it on a thread of its own as soon as the
 * choice is known, so that it runs while the model's files open and the prompt is tokenized (fs run's first token);
 * {@link Engine#load} takes the results, and what it threw is thrown there, where making the backend would have
 * thrown it. Either result is what making the backend then would have found: the devices are looked at once per JVM
 * anyway, and the CPU kernels depend only on the settings, which do not change.
 */
public final class BackendPreparation {
    private final BackendChoice backend;
    private final Integer device;
    /** Whether a thread of its own prepares it ({@link #start}), or the first caller to ask ({@link #whenAsked}). */
    private final boolean started;
    /** {@link OpenCl#select} for auto and opencl (a CPU device allowed for opencl only); null for cpu and java. */
    private final FutureTask<OpenCl.Selection> openClSelection;
    /** {@link CpuKernels#fromEnvironment}. */
    private final FutureTask<CpuKernels> cpuKernels = new FutureTask<>(CpuKernels::fromEnvironment);

    private BackendPreparation(BackendChoice backend, Integer device, boolean started) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.device = device;
        this.started = started;
        openClSelection = new FutureTask<>(() -> switch (backend) {
            case AUTO, OPENCL -> OpenCl.select(backend == BackendChoice.OPENCL, device);
            case CPU, JAVA -> null;
        });
    }

    /**
     * Begins preparing the backend {@code backend} and OpenCL device {@code device} (null: fs chooses) name: the
     * OpenCL selection, then the CPU kernels when the CPU is chosen (cpu, or auto without an OpenCL GPU).
     */
    public static BackendPreparation start(BackendChoice backend, Integer device) {
        BackendPreparation preparation = new BackendPreparation(backend, device, true);
        Thread thread = new Thread(preparation::prepare, "fs-backend-preparation");
        thread.setDaemon(true);
        thread.start();
        return preparation;
    }

    /** Prepared when first asked, on the thread that asks: for a caller with nothing to do meanwhile. */
    static BackendPreparation whenAsked(BackendChoice backend, Integer device) {
        return new BackendPreparation(backend, device, false);
    }

    private void prepare() {
        openClSelection.run();
        boolean cpu = backend == BackendChoice.CPU
                || backend == BackendChoice.AUTO && openClSelection.state() == Future.State.SUCCESS
                        && openClSelection.resultNow() instanceof OpenCl.Selection.NotSelected;
        if (cpu) cpuKernels.run();
    }

    /**
     * Waits for the look at the OpenCL devices to end, however it ends: for a caller about to fail on something
     * else, so that the process does not exit in the middle of an OpenCL driver's start-up.
     */
    public void settle() {
        if (!started) return;
        try {
            outcome(openClSelection);
        } catch (RuntimeException | Error e) {
            // the caller's own failure is the one to report
        }
    }

    boolean isFor(BackendChoice backend, Integer device) {
        return this.backend == backend && Objects.equals(this.device, device);
    }

    OpenCl.Selection openClSelection() {
        return join(openClSelection);
    }

    CpuKernels cpuKernels() {
        return join(cpuKernels);
    }

    /** {@code task}'s result, run on this thread if no other has begun it; what it threw is thrown as it was. */
    private static <T> T join(FutureTask<T> task) {
        task.run(); // returns at once when the task has run, or is running on the preparation's thread
        return outcome(task);
    }

    /** Waits for {@code task} (through interrupts, kept for the caller: it is short), and throws what it threw. */
    private static <T> T outcome(FutureTask<T> task) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return task.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) throw runtime;
            if (e.getCause() instanceof Error error) throw error;
            throw new IllegalStateException(e.getCause());
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }
}
