package fs.hub;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code owner/name:QUANT}, llama.cpp's -hf convention for one GGUF file of a hub repo: the tag names the quantization
 * that ends the file's name, compared case-insensitively ({@code Qwen/Qwen3-0.6B-GGUF:Q8_0} is the repo's
 * Qwen3-0.6B-Q8_0.gguf, and so is {@code :q8_0}).
 */
record GgufTag(RepoId repo, String tag) {
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
    /** The parts of a split GGUF's name (model-Q8_0-00001-of-00003.gguf) that come after its tag. */
    private static final Pattern SPLIT_SUFFIX = Pattern.compile("-\\d{5}-of-\\d{5}$");

    static Optional<GgufTag> parse(String text) {
        int colon = text.lastIndexOf(':');
        if (colon < 0) return Optional.empty();
        String tag = text.substring(colon + 1);
        if (!TAG.matcher(tag).matches()) return Optional.empty();
        return RepoId.parse(text.substring(0, colon)).map(repo -> new GgufTag(repo, tag));
    }

    /** Whether the repo file {@code path} is this tag's GGUF file: its name ends with "-TAG.gguf" or ".TAG.gguf". */
    boolean matches(String path) {
        String stem = stem(path);
        if (stem == null) return false;
        String lower = stem.toLowerCase(Locale.ROOT);
        String tagLower = tag.toLowerCase(Locale.ROOT);
        return lower.equals(tagLower) || lower.endsWith("-" + tagLower) || lower.endsWith("." + tagLower);
    }

    /** The tag a GGUF file's name ends with (what follows its last '-' or '.'), or null when it is no .gguf file. */
    static String tagOf(String path) {
        String stem = stem(path);
        if (stem == null) return null;
        Matcher split = SPLIT_SUFFIX.matcher(stem);
        if (split.find()) stem = stem.substring(0, split.start());
        int cut = Math.max(stem.lastIndexOf('-'), stem.lastIndexOf('.'));
        return stem.substring(cut + 1);
    }

    /** The file name of a .gguf path without the extension, or null for another file. */
    private static String stem(String path) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        return name.toLowerCase(Locale.ROOT).endsWith(".gguf") ? name.substring(0, name.length() - ".gguf".length()) : null;
    }

    @Override
    public String toString() {
        return repo + ":" + tag;
    }
}
