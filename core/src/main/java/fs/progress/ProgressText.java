package fs.progress;

import java.util.Locale;

/**
 * The pieces every progress line on stderr is made of (downloads, {@code fs quantize}), so that they all read alike:
 * sizes as {@link fs.HumanSize} writes them, a speed in MiB/s and a bar of '#' and '-'.
 */
public final class ProgressText {
    private ProgressText() {}

    /** {@code bytes} over {@code seconds} in MiB/s; a duration under a millisecond counts as one. */
    public static String rate(long bytes, double seconds) {
        return String.format(Locale.ROOT, "%.1f MiB/s", bytes / (double) (1 << 20) / Math.max(seconds, 1e-3));
    }

    /** A bar {@code width} characters wide, filled in proportion to done / total (full when total is not known). */
    public static String bar(long done, long total, int width) {
        int filled = total > 0 ? (int) (width * Math.min(done, total) / total) : width;
        return "#".repeat(filled) + "-".repeat(width - filled);
    }
}
