package fs.hub;

import java.util.Optional;
import java.util.regex.Pattern;

/** A Hugging Face model repo id, {@code owner/name}, e.g. {@code Qwen/Qwen3-0.6B}. */
public record RepoId(String owner, String name) {
    // The hub's own rule: letters, digits, '-', '_', '.', at most 96 characters a part, no "--" or "..", and no
    // '-' or '.' at either end of a part.
    private static final Pattern PART = Pattern.compile("[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?");

    /** The repo id {@code text} spells, or empty when it is not one. */
    public static Optional<RepoId> parse(String text) {
        int slash = text.indexOf('/');
        if (slash < 0 || slash != text.lastIndexOf('/')) return Optional.empty();
        String owner = text.substring(0, slash);
        String name = text.substring(slash + 1);
        if (!isPart(owner) || !isPart(name)) return Optional.empty();
        return Optional.of(new RepoId(owner, name));
    }

    private static boolean isPart(String part) {
        return PART.matcher(part).matches() && !part.contains("--") && !part.contains("..");
    }

    /** The folder the Hugging Face cache keeps this repo in: {@code models--owner--name}. */
    public String cacheFolderName() {
        return "models--" + owner + "--" + name;
    }

    @Override
    public String toString() {
        return owner + "/" + name;
    }
}
