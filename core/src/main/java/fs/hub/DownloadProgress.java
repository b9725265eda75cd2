package fs.hub;

import static fs.progress.ProgressText.bar;
import static fs.progress.ProgressText.rate;

import fs.HumanSize;
import java.io.PrintWriter;
import java.util.Locale;

/**
 * Reports one file's download on stderr: on a terminal a bar redrawn in place at most ten times a second (bytes, %,
 * MiB/s); otherwise, so that logs stay readable, one line when the file is done.
 */
final class DownloadProgress {
    private static final long REDRAW_NANOS = 100_000_000L;
    private static final int BAR_WIDTH = 24;

    private final PrintWriter log;
    private final boolean terminal;

    private String file;
    private long total;
    private long resumedFrom;
    private long done;
    private long startNanos;
    private long lastDrawNanos;

    DownloadProgress(PrintWriter log, boolean terminal) {
        this.log = log;
        this.terminal = terminal;
    }

    /** A file starts; {@code total} is its size (-1 if unknown), {@code resumedFrom} the bytes already on disk. */
    void start(String file, long total, long resumedFrom) {
        this.file = file;
        this.total = total;
        this.resumedFrom = resumedFrom;
        this.done = resumedFrom;
        this.startNanos = System.nanoTime();
        this.lastDrawNanos = 0;
        if (terminal) draw(startNanos);
    }

    void advance(long bytes) {
        done += bytes;
        if (!terminal) return;
        long now = System.nanoTime();
        if (now - lastDrawNanos >= REDRAW_NANOS) draw(now);
    }

    /** The file is complete (or failed, when {@code ok} is false: the bar is ended so that the error starts a line). */
    void finish(boolean ok) {
        long now = System.nanoTime();
        if (terminal) {
            draw(now);
            log.println();
        } else if (ok) {
            double seconds = (now - startNanos) / 1e9;
            String resumed = resumedFrom > 0 ? ", resumed at " + HumanSize.of(resumedFrom) : "";
            log.printf(Locale.ROOT, "downloaded %s: %s in %.1f s (%s%s)%n",
                    file, HumanSize.of(done), seconds, rate(done - resumedFrom, seconds), resumed);
        }
        log.flush();
    }

    private void draw(long now) {
        lastDrawNanos = now;
        double seconds = Math.max((now - startNanos) / 1e9, 1e-3);
        StringBuilder line = new StringBuilder("\r").append(file).append(' ');
        if (total > 0) {
            line.append(String.format(Locale.ROOT, "%3d%% [", 100 * done / total))
                    .append(bar(done, total, BAR_WIDTH)).append("] ")
                    .append(HumanSize.of(done)).append(" / ").append(HumanSize.of(total));
        } else {
            line.append(HumanSize.of(done));
        }
        line.append("  ").append(rate(done - resumedFrom, seconds)).append("\u001b[K");
        log.print(line);
        log.flush();
    }
}
