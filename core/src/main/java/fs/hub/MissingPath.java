package fs.hub;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * A MODEL argument that names no existing file but sits in an existing folder ({@code models/tiny-tiedd}): a mistyped
 * local path, which is answered with the nearest name in that folder rather than taken for a Hugging Face repo id.
 */
record MissingPath(Path path, Optional<Path> nearest) {

    /**
     * {@code model} as a missing path in an existing folder, or empty when its folder does not exist either. The nearest
     * entry is one of the same kind (a .gguf file for a .gguf name, else a folder) at most half the name's length in
     * edits away: a typo, not any name at all.
     */
    static Optional<MissingPath> of(String model, boolean gguf) {
        Path path;
        try {
            path = Path.of(model);
        } catch (InvalidPathException e) {
            return Optional.empty();
        }
        Path folder = path.getParent();
        if (folder == null || Files.exists(path) || !Files.isDirectory(folder)) return Optional.empty();
        String name = path.getFileName().toString();
        Predicate<Path> sameKind = gguf
                ? entry -> Files.isRegularFile(entry) && entry.getFileName().toString().toLowerCase(Locale.ROOT)
                        .endsWith(".gguf")
                : Files::isDirectory;
        try (Stream<Path> entries = Files.list(folder)) {
            Optional<Path> nearest = entries.filter(sameKind)
                    .filter(entry -> editDistance(name, entry.getFileName().toString()) <= name.length() / 2)
                    .min(Comparator.<Path>comparingInt(entry -> editDistance(name, entry.getFileName().toString()))
                            .thenComparing(entry -> entry.getFileName().toString()));
            return Optional.of(new MissingPath(path, nearest));
        } catch (IOException e) {
            return Optional.of(new MissingPath(path, Optional.empty())); // unreadable: still say what is missing
        }
    }

    /** "X: no such directory (did you mean Y?)", with {@code what} for "directory". */
    String message(String what) {
        return path + ": no such " + what + nearest.map(name -> " (did you mean " + name + "?)").orElse("");
    }

    /** Insertions, deletions and replacements from {@code a} to {@code b} (Levenshtein). */
    static int editDistance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) previous[j] = j;
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int replace = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(replace, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
