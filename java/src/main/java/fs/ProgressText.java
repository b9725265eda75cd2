package fs;

import java.util.Locale;

/**
 * The pieces every progress line on stderr is made of (downloads, {@code fs quantize}), so that they all read alike:
 * sizes in decimal units, a speed in MB/s and a bar of '#' and '-'.
 */
public final class ProgressText {
    private ProgressText() {}

    /** A size in decimal units with three significant figures or so: "999 B", "40.0 kB", "1.2 MB", "1.50 GB". */
    public static String bytes(long n) {
        if (n < 1_000) return n + " B";
        if (n < 1_000_000) return String.format(Locale.ROOT, "%.1f kB", n / 1e3);
        if (n < 1_000_000_000) return String.format(Locale.ROOT, "%.1f MB", n / 1e6);
        return String.format(Locale.ROOT, "%.2f GB", n / 1e9);
    }

    /** {@code bytes} over {@code seconds} in MB/s; a duration under a millisecond counts as one. */
    public static String rate(long bytes, double seconds) {
        return String.format(Locale.ROOT, "%.1f MB/s", bytes / 1e6 / Math.max(seconds, 1e-3));
    }

    /** A bar {@code width} characters wide, filled in proportion to done / total (full when total is not known). */
    public static String bar(long done, long total, int width) {
        int filled = total > 0 ? (int) (width * Math.min(done, total) / total) : width;
        return "#".repeat(filled) + "-".repeat(width - filled);
    }
}
