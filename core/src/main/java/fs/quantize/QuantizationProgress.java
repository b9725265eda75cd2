package fs.quantize;

import static fs.progress.ProgressText.bar;
import static fs.progress.ProgressText.rate;

import fs.HumanSize;
import java.io.PrintWriter;
import java.util.Locale;

/**
 * Reports {@code fs quantize} on stderr as the hub's download progress does: on a terminal a bar redrawn in place at
 * most ten times a second (tensors done, bytes written of the total, speed, time left, the tensor being written);
 * otherwise, so that a log shows the run go on without filling up, the same line once per tenth of the bytes; then
 * one line. Called by the one thread that writes the file.
 */
public final class QuantizationProgress {
    private static final long REDRAW_NANOS = 100_000_000L;
    private static final int BAR_WIDTH = 24;

    private final PrintWriter log;
    private final boolean terminal;
    private final int tensors;
    private final long total;
    private final long startNanos = System.nanoTime();
    private int tensorsDone;
    private long done;
    private long lastDrawNanos;
    private String current = "";

    public QuantizationProgress(PrintWriter log, boolean terminal, QuantizationPlan plan) {
        this.log = log;
        this.terminal = terminal;
        this.tensors = plan.tensors().size();
        this.total = plan.bytes();
    }

    /** {@code bytes} more of tensor {@code name} are written; {@code tensorComplete} when that was its last piece. */
    void advance(String name, long bytes, boolean tensorComplete) {
        current = name;
        long before = done;
        done += bytes;
        if (tensorComplete) tensorsDone++;
        boolean last = tensorComplete && tensorsDone == tensors;
        long now = System.nanoTime();
        if (terminal) {
            if (now - lastDrawNanos >= REDRAW_NANOS || last) draw(now);
        } else if (last || tenths(done) > tenths(before)) {
            log.println(line(now));
            log.flush();
        }
    }

    private int tenths(long bytes) {
        return total > 0 ? (int) (10 * bytes / total) : 10;
    }

    /** The file is complete (or failed, when {@code ok} is false: the bar is ended so that the error starts a line). */
    void finish(boolean ok, String file) {
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        if (terminal) log.println();
        if (ok) {
            log.printf(Locale.ROOT, "fs: wrote %s: %d tensors, %s in %.1f s (%s)%n", file, tensors,
                    HumanSize.of(done), seconds, rate(done, seconds));
        }
        log.flush();
    }

    private void draw(long now) {
        lastDrawNanos = now;
        log.print("\r" + line(now) + "\u001b[K");
        log.flush();
    }

    /** "[12/24]  50% [############------------] 1.2 MiB / 2.4 MiB  3.4 MiB/s  ETA 0:02  blk.5.ffn_up.weight". */
    private String line(long now) {
        double seconds = Math.max((now - startNanos) / 1e9, 1e-3);
        String left = done > 0 && done < total ? "  ETA " + duration(seconds * (total - done) / done) : "";
        return String.format(Locale.ROOT, "[%d/%d] %3d%% [%s] %s / %s  %s%s  %s", tensorsDone, tensors,
                total > 0 ? 100 * done / total : 100, bar(done, total, BAR_WIDTH), HumanSize.of(done),
                HumanSize.of(total), rate(done, seconds), left, current);
    }

    private static String duration(double seconds) {
        long s = Math.round(seconds);
        return s >= 3600 ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
                : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }
}
