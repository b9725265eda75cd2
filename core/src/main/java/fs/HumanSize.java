package fs;

import java.util.Locale;

/**
 * A size as every fs output prints one (inspect, bench, list, devices, downloads, quantize): in binary units, as
 * llama.cpp prints model sizes, with the digits that matter: "999 B", "40.0 KiB", "1.2 MiB", "373 MiB", "1.11 GiB".
 */
public final class HumanSize {
    private static final String[] UNITS = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

    private HumanSize() {}

    /** {@code bytes} (at least 0) in the largest unit it reaches; gibibytes and above with two decimals. */
    public static String of(long bytes) {
        if (bytes < 1024) return bytes + " B";
        int unit = (63 - Long.numberOfLeadingZeros(bytes)) / 10 - 1; // 2^(10 (unit + 1)) <= bytes
        double value = bytes / Math.pow(1024, unit + 1);
        String digits = unit >= 2 ? "%.2f" : value >= 99.95 ? "%.0f" : "%.1f";
        return String.format(Locale.ROOT, digits + " %s", value, UNITS[unit]);
    }
}
