package fs.hub;

import fs.FsException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The models in the Hugging Face cache, as {@code fs list} shows them and {@code fs rm} removes them: every
 * {@code models--Owner--Name} folder, whoever downloaded it (fs, huggingface-cli, transformers).
 */
public final class CachedModels {
    /**
     * One cached repo: the commit refs/main names (null when it has none), the bytes of its blobs on disk, the files
     * of that snapshot, and what fs would run from it.
     */
    public record CachedModel(RepoId repo, String commit, long bytes, List<String> files, String format) {
        /** The commit's first 7 characters, as git abbreviates it, or "-" when there is none. */
        public String revision() {
            return commit == null ? "-" : commit.substring(0, Math.min(7, commit.length()));
        }

        /** The bytes as fs prints every size (1.11 GiB). */
        public String size() {
            return fs.HumanSize.of(bytes);
        }
    }

    private final HubCache cache;

    private CachedModels(HubCache cache) {
        this.cache = cache;
    }

    /** The cache the environment names (HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, HOME: see {@link HubCache}). */
    public static CachedModels in(Map<String, String> environment) {
        return new CachedModels(HubCache.locate(environment));
    }

    public Path root() {
        return cache.root();
    }

    /** Every cached model repo, sorted by repo id; an absent cache is an empty list. */
    public List<CachedModel> list() {
        if (!Files.isDirectory(cache.root())) return List.of();
        List<CachedModel> models = new ArrayList<>();
        try (Stream<Path> folders = Files.list(cache.root())) {
            for (Path folder : folders.sorted().toList()) {
                repoOf(folder.getFileName().toString()).ifPresent(repo -> models.add(describe(repo)));
            }
        } catch (IOException e) {
            throw new FsException("cannot read the Hugging Face cache " + cache.root() + " (" + e.getMessage() + ")", e);
        }
        models.sort((a, b) -> a.repo().toString().compareToIgnoreCase(b.repo().toString()));
        return List.copyOf(models);
    }

    /** Deletes a cached repo, blobs and all, and says what it was; a repo that is not cached is an error. */
    public CachedModel remove(RepoId repo) {
        Path folder = cache.repoDir(repo);
        if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
            throw new FsException(repo + " is not in the Hugging Face cache (" + cache.root() + "): `fs list` shows "
                    + "what is");
        }
        CachedModel removed = describe(repo);
        try {
            deleteTree(folder);
        } catch (IOException | UncheckedIOException e) {
            throw new FsException("cannot remove " + folder + " (" + e.getMessage() + "): part of it may be left", e);
        }
        return removed;
    }

    /** {@code models--Owner--Name} → Owner/Name; anything else in the cache (datasets--…, version.txt) is skipped. */
    static Optional<RepoId> repoOf(String folderName) {
        if (!folderName.startsWith("models--")) return Optional.empty();
        String rest = folderName.substring("models--".length());
        int cut = rest.indexOf("--");
        if (cut < 0) return Optional.empty();
        return RepoId.parse(rest.substring(0, cut) + "/" + rest.substring(cut + 2));
    }

    private CachedModel describe(RepoId repo) {
        try {
            Optional<Path> snapshot = cache.mainSnapshot(repo);
            String commit = snapshot.map(s -> s.getFileName().toString()).orElse(null);
            List<String> files = snapshot.isPresent() ? snapshotFiles(snapshot.get()) : List.of();
            return new CachedModel(repo, commit, blobBytes(repo), files, format(snapshot, files));
        } catch (IOException e) {
            throw new FsException(cache.repoDir(repo) + ": cannot read it (" + e.getMessage() + ")", e);
        }
    }

    private static String format(Optional<Path> snapshot, List<String> files) {
        if (snapshot.isEmpty()) return "incomplete (no snapshot of main)";
        List<String> tags = files.stream().map(GgufTag::tagOf).filter(t -> t != null).distinct().toList();
        if (!tags.isEmpty()) return "gguf (" + String.join(", ", tags) + ")";
        List<String> missing = ModelFiles.missing(snapshot.get());
        return missing.isEmpty() ? "safetensors" : "incomplete (lacks " + String.join(", ", missing) + ")";
    }

    private long blobBytes(RepoId repo) throws IOException {
        Path blobs = cache.repoDir(repo).resolve("blobs");
        if (!Files.isDirectory(blobs)) return 0;
        try (Stream<Path> files = Files.list(blobs)) {
            long total = 0;
            for (Path blob : files.toList()) {
                if (Files.isRegularFile(blob, LinkOption.NOFOLLOW_LINKS)) total += Files.size(blob);
            }
            return total;
        }
    }

    /** The files of a snapshot (links into blobs) relative to it, '/'-separated, sorted. */
    private static List<String> snapshotFiles(Path snapshot) throws IOException {
        try (Stream<Path> paths = Files.walk(snapshot, 4)) {
            return paths.filter(p -> !Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS))
                    .map(p -> snapshot.relativize(p).toString().replace(java.io.File.separatorChar, '/'))
                    .sorted()
                    .toList();
        }
    }

    /** Deletes a folder without following links: a snapshot's links go, the files they point to outside stay. */
    private static void deleteTree(Path folder) throws IOException {
        Files.walkFileTree(folder, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException failure) throws IOException {
                if (failure != null) throw failure;
                Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
