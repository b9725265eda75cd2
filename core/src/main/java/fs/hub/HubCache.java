package fs.hub;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The Hugging Face hub cache on disk, in huggingface_hub's layout, so that models downloaded by fs, by
 * {@code huggingface-cli download} or by transformers are shared:
 * <pre>
 * root/models--Owner--Name/refs/main                 the commit hash "main" pointed to when downloaded
 * root/models--Owner--Name/blobs/ETAG                each file's bytes, named by the hub's ETag
 * root/models--Owner--Name/blobs/ETAG.incomplete     a download in progress (resumed from its length)
 * root/models--Owner--Name/snapshots/COMMIT/FILE     symlink to ../../blobs/ETAG
 * root/models--Owner--Name/.no_exist/COMMIT/FILE     empty: the hub has no such file at that commit
 * </pre>
 */
final class HubCache {
    private static final Pattern COMMIT = Pattern.compile("[0-9a-f]{40}");

    private final Path root;

    HubCache(Path root) {
        this.root = root;
    }

    /** HF_HUB_CACHE, else HF_HOME/hub, else XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. */
    static HubCache locate(Map<String, String> environment) {
        String hubCache = environment.get("HF_HUB_CACHE");
        if (isSet(hubCache)) return new HubCache(Path.of(hubCache));
        String hfHome = environment.get("HF_HOME");
        if (isSet(hfHome)) return new HubCache(Path.of(hfHome, "hub"));
        String xdg = environment.get("XDG_CACHE_HOME");
        if (isSet(xdg)) return new HubCache(Path.of(xdg, "huggingface", "hub"));
        String home = environment.getOrDefault("HOME", System.getProperty("user.home"));
        return new HubCache(Path.of(home, ".cache", "huggingface", "hub"));
    }

    private static boolean isSet(String value) {
        return value != null && !value.isBlank();
    }

    Path root() {
        return root;
    }

    Path repoDir(RepoId repo) {
        return root.resolve(repo.cacheFolderName());
    }

    /** The snapshot folder refs/main points to, when both exist. */
    Optional<Path> mainSnapshot(RepoId repo) throws IOException {
        Path ref = repoDir(repo).resolve("refs").resolve("main");
        if (!Files.isRegularFile(ref)) return Optional.empty();
        String commit = Files.readString(ref, StandardCharsets.UTF_8).strip();
        if (!COMMIT.matcher(commit).matches()) return Optional.empty();
        Path snapshot = snapshotDir(repo, commit);
        return Files.isDirectory(snapshot) ? Optional.of(snapshot) : Optional.empty();
    }

    Path snapshotDir(RepoId repo, String commit) {
        return repoDir(repo).resolve("snapshots").resolve(commit);
    }

    Path blob(RepoId repo, String etag) {
        return repoDir(repo).resolve("blobs").resolve(etag);
    }

    Path incompleteBlob(RepoId repo, String etag) {
        return repoDir(repo).resolve("blobs").resolve(etag + ".incomplete");
    }

    /** Points snapshots/COMMIT/FILE at blobs/ETAG with a relative link, replacing whatever was there. */
    void link(RepoId repo, String commit, String file, String etag) throws IOException {
        Path link = snapshotDir(repo, commit).resolve(file);
        Files.createDirectories(link.getParent());
        Files.deleteIfExists(link);
        Files.createSymbolicLink(link, link.getParent().relativize(blob(repo, etag)));
    }

    void writeMainRef(RepoId repo, String commit) throws IOException {
        Path ref = repoDir(repo).resolve("refs").resolve("main");
        Files.createDirectories(ref.getParent());
        Path temporary = ref.resolveSibling("main.tmp");
        Files.writeString(temporary, commit, StandardCharsets.UTF_8);
        Files.move(temporary, ref, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    void markMissing(RepoId repo, String commit, String file) throws IOException {
        Path marker = noExist(repo, commit, file);
        Files.createDirectories(marker.getParent());
        if (!Files.exists(marker)) Files.createFile(marker);
    }

    boolean isMarkedMissing(RepoId repo, String commit, String file) {
        return Files.exists(noExist(repo, commit, file));
    }

    private Path noExist(RepoId repo, String commit, String file) {
        return repoDir(repo).resolve(".no_exist").resolve(commit).resolve(file);
    }
}
