package fs.eval;


import java.io.PrintWriter;
import java.util.Locale;

/**
 * The progress of a run over windows of a text (fs perplexity, fs imatrix) on stderr: windows done, the running
 * figures, time per window and the time left. On a terminal one line redrawn after each window; otherwise, so that
 * logs stay short, a line at each tenth of the run (each window of a run of ten or fewer). One thread at a time.
 */
public final class WindowProgress {
    private static final int BAR_WIDTH = 20;

    private final PrintWriter log;
    private final String task;
    private final boolean terminal;
    private final int total;
    private final long startNanos;
    private int done;

    /**
     * @param task     what runs, the line's first word ("perplexity")
     * @param total    windows to run
     * @param terminal whether {@code log} is a terminal (the line is redrawn in place)
     */
    public WindowProgress(PrintWriter log, String task, boolean terminal, int total) {
        this.log = log;
        this.task = task;
        this.terminal = terminal;
        this.total = total;
        this.startNanos = System.nanoTime();
    }

    /** One more window is done; {@code figures} are the running figures after it, e.g. "PPL 17.2891". */
    public void windowDone(String figures) {
        done++;
        boolean last = done == total;
        if (!terminal && !last && (long) done * 10 / total == (long) (done - 1) * 10 / total) return;
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        double perWindow = seconds / done;
        int filled = (int) ((long) BAR_WIDTH * done / total);
        String line = String.format(Locale.ROOT, "%s: %d/%d windows [%s%s] %s, %.2f s/window, %s",
                task, done, total, "#".repeat(filled), "-".repeat(BAR_WIDTH - filled), figures, perWindow,
                last ? String.format(Locale.ROOT, "%.1f s in all", seconds)
                        : "ETA " + duration(perWindow * (total - done)));
        if (terminal) {
            log.print("\r" + line + "\u001b[K");
            if (last) log.println();
        } else {
            log.println(line);
        }
        log.flush();
    }

    /** Ends a redrawn line that a failure cut short, so that the error starts a line of its own. */
    public void end() {
        if (terminal && done > 0 && done < total) {
            log.println();
            log.flush();
        }
    }

    private static String duration(double seconds) {
        long s = Math.round(seconds);
        return s < 60 ? s + " s" : s < 3600 ? String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60)
                : String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
    }
}
