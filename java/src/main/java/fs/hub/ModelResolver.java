package fs.hub;

import fs.FsException;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Turns the MODEL argument of a command into a local model directory: a directory as given, or a Hugging Face repo id
 * ({@code Qwen/Qwen3-0.6B}) found in, or downloaded into, the Hugging Face cache (see {@link HubCache}).
 *
 * <p>A complete cached snapshot of "main" is used as it is, without asking the hub about newer commits. Otherwise the
 * hub resolves "main" to a commit and the missing files of that commit are downloaded: config.json,
 * generation_config.json (when the repo has one), tokenizer.json, tokenizer_config.json, and model.safetensors or
 * model.safetensors.index.json with its shards.
 *
 * <p>Environment: HF_HUB_CACHE / HF_HOME / XDG_CACHE_HOME (where the cache is), HF_ENDPOINT (default
 * https://huggingface.co), HF_TOKEN (sent as a Bearer token), HF_HUB_OFFLINE=1 (cache only).
 */
public final class ModelResolver {
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

    private static final String DEFAULT_ENDPOINT = "https://huggingface.co";
    private static final Set<String> TRUE_VALUES = Set.of("1", "on", "yes", "true");
    private static final Pattern COMMIT = Pattern.compile("[0-9a-f]{40}");

    private final Map<String, String> environment;
    private final PrintWriter log;
    private final boolean progressBar;
    private final Duration readTimeout;

    /**
     * @param environment the environment variables to obey (System.getenv() in the CLI)
     * @param log         where download progress goes (stderr in the CLI)
     * @param progressBar a bar redrawn in place (for a terminal), else one line per downloaded file
     */
    public ModelResolver(Map<String, String> environment, PrintWriter log, boolean progressBar) {
        this(environment, log, progressBar, READ_TIMEOUT);
    }

    ModelResolver(Map<String, String> environment, PrintWriter log, boolean progressBar, Duration readTimeout) {
        this.environment = Map.copyOf(environment);
        this.log = log;
        this.progressBar = progressBar;
        this.readTimeout = readTimeout;
    }

    /** {@link #resolveModel} with the process environment, progress on stderr. */
    public static Path resolve(String model) {
        return resolve(model, new PrintWriter(System.err, true));
    }

    /** {@link #resolveModel} with the process environment, progress on {@code log}: a bar if stderr is a terminal. */
    public static Path resolve(String model, PrintWriter log) {
        return new ModelResolver(System.getenv(), log, DownloadProgress.stderrIsTerminal()).resolveModel(model);
    }

    /**
     * The local directory holding {@code model}: the directory itself when it exists (it must contain config.json),
     * else the cache snapshot of the Hugging Face repo it names, downloaded first when needed.
     *
     * @throws FsException with one line saying what is wrong and what to do
     */
    public Path resolveModel(String model) {
        Optional<Path> local = existingPath(model);
        if (local.isPresent()) return checkedDirectory(local.get());
        RepoId repo = RepoId.parse(model).orElseThrow(() -> new FsException(
                "'" + model + "' is not a directory and not a Hugging Face repo id (owner/name, e.g. Qwen/Qwen3-0.6B)"));
        try {
            return resolveRepo(repo);
        } catch (IOException e) {
            throw new FsException(repo + ": cannot use the Hugging Face cache (" + e + ")", e);
        }
    }

    private static Optional<Path> existingPath(String model) {
        if (model.isBlank()) return Optional.empty(); // Path.of("") is the working directory
        try {
            Path path = Path.of(model);
            return Files.exists(path) ? Optional.of(path) : Optional.empty();
        } catch (InvalidPathException e) {
            return Optional.empty();
        }
    }

    private static Path checkedDirectory(Path path) {
        if (!Files.isDirectory(path)) {
            throw new FsException(path + " is a file, not a model directory (one with config.json, tokenizer.json "
                    + "and safetensors weights)");
        }
        if (!Files.isRegularFile(path.resolve(ModelFiles.CONFIG))) {
            throw new FsException(path + " has no " + ModelFiles.CONFIG + ": not a Hugging Face model directory");
        }
        return path;
    }

    private Path resolveRepo(RepoId repo) throws IOException {
        HubCache cache = HubCache.locate(environment);
        Optional<Path> cached = cache.mainSnapshot(repo);
        List<String> missing = cached.map(ModelFiles::missing).orElse(List.of());
        if (cached.isPresent() && missing.isEmpty()) return cached.get();

        String inCache = cached.isPresent()
                ? "is only partly in the Hugging Face cache (" + cache.repoDir(repo) + " lacks " + String.join(", ", missing) + ")"
                : "is not in the Hugging Face cache (" + cache.repoDir(repo) + ")";
        String otherWays = "download it with `huggingface-cli download " + repo + "`, or pass a local directory";
        if (TRUE_VALUES.contains(environment.getOrDefault("HF_HUB_OFFLINE", "").strip().toLowerCase(Locale.ROOT))) {
            throw new FsException(repo + " " + inCache + " and HF_HUB_OFFLINE is set: unset it to let fs download "
                    + "the model, or " + otherWays);
        }
        try (HubClient client = new HubClient(endpoint(), token(), CONNECT_TIMEOUT, readTimeout)) {
            try {
                return download(client, cache, repo);
            } catch (HubClient.StatusException e) {
                if (e.status == 401 || e.status == 403) {
                    throw new FsException(repo + ": the Hugging Face hub refused access (" + e.getMessage() + "): the "
                            + "repo does not exist, or it is private or gated: check the name"
                            + (token() == null ? ", or set HF_TOKEN to a token that has access" : " and HF_TOKEN")
                            + " (it is not a local directory either)", e);
                }
                throw new FsException(repo + " " + inCache + " and could not be downloaded (" + e.getMessage()
                        + "): try again later, or " + otherWays, e);
            } catch (HubClient.NetworkException e) {
                String retry = !e.unreachable ? "run again (downloads resume)"
                        : customEndpoint() ? "HF_ENDPOINT (" + client.endpoint() + ") cannot be reached: check it and "
                                + "run again (downloads resume)"
                        : "connect to the internet and run again (downloads resume)";
                throw new FsException(repo + " " + inCache + " and could not be downloaded (" + e.getMessage()
                        + "): " + retry + ", or " + otherWays, e);
            } catch (FileSystemException e) {
                throw new FsException(repo + " " + inCache + " and could not be stored there (" + e.getFile() + ": "
                        + (e.getReason() != null ? e.getReason() : e.getClass().getSimpleName()) + ")", e);
            } catch (IOException e) {
                throw new FsException(repo + " " + inCache + " and could not be downloaded (" + e.getMessage() + ")", e);
            }
        }
    }

    /** Downloads what the snapshot of main's current commit lacks, then points refs/main at it. */
    private Path download(HubClient client, HubCache cache, RepoId repo) throws IOException {
        HubClient.FileInfo config = client.fileInfo(repo, "main", ModelFiles.CONFIG).orElseThrow(() ->
                new FsException(repo + ": the Hugging Face hub has no " + ModelFiles.CONFIG + " in this repo ("
                        + client.resolveUrl(repo, "main", ModelFiles.CONFIG) + " is 404): check the repo id; it is "
                        + "not a local directory either"));
        String commit = config.commit();
        if (!COMMIT.matcher(commit).matches()) {
            throw new IOException("the hub named an unusable commit '" + commit + "' for " + repo);
        }
        Path snapshot = cache.snapshotDir(repo, commit);
        log.println("fetching " + repo + " (commit " + commit + ") from " + client.endpoint() + " into "
                + cache.repoDir(repo));
        log.flush();
        Downloads downloads = new Downloads(client, cache, repo, commit, new DownloadProgress(log, progressBar));

        downloads.store(ModelFiles.CONFIG, config);
        downloads.fetch(ModelFiles.GENERATION_CONFIG, false);
        downloads.fetch(ModelFiles.TOKENIZER, true);
        downloads.fetch(ModelFiles.TOKENIZER_CONFIG, true);
        if (!Files.isRegularFile(snapshot.resolve(ModelFiles.WEIGHTS))
                && !Files.isRegularFile(snapshot.resolve(ModelFiles.WEIGHTS_INDEX))) {
            if (!downloads.fetch(ModelFiles.WEIGHTS, false)) downloads.fetch(ModelFiles.WEIGHTS_INDEX, true);
        }
        if (!Files.isRegularFile(snapshot.resolve(ModelFiles.WEIGHTS))) {
            for (String shard : ModelFiles.shards(snapshot.resolve(ModelFiles.WEIGHTS_INDEX))) {
                downloads.fetch(shard, true);
            }
        }
        List<String> missing = ModelFiles.missing(snapshot);
        if (!missing.isEmpty()) throw new IOException("after the download " + snapshot + " still lacks " + missing);
        cache.writeMainRef(repo, commit);
        return snapshot;
    }

    /** Fills one snapshot of one repo, file by file. */
    private record Downloads(HubClient client, HubCache cache, RepoId repo, String commit, DownloadProgress progress) {

        /** Makes sure the snapshot has {@code file}; returns false when the hub has none (an error if required). */
        boolean fetch(String file, boolean required) throws IOException {
            if (Files.isRegularFile(cache.snapshotDir(repo, commit).resolve(file))) return true;
            if (!required && cache.isMarkedMissing(repo, commit, file)) return false;
            Optional<HubClient.FileInfo> info = client.fileInfo(repo, commit, file);
            if (info.isEmpty()) {
                if (required) {
                    throw new FsException(repo + " at commit " + commit + " has no " + file + " on the Hugging Face "
                            + "hub: not a model repo fs can run");
                }
                cache.markMissing(repo, commit, file);
                return false;
            }
            store(file, info.get());
            return true;
        }

        void store(String file, HubClient.FileInfo info) throws IOException {
            Path blob = cache.blob(repo, info.etag());
            if (!Files.isRegularFile(blob)) client.download(info, file, blob, progress);
            cache.link(repo, commit, file, info.etag());
        }
    }

    /** Whether the user pointed fs at a hub of their own (a mirror, a proxy) rather than huggingface.co. */
    private boolean customEndpoint() {
        return !environment.getOrDefault("HF_ENDPOINT", "").isBlank();
    }

    private URI endpoint() {
        String endpoint = environment.getOrDefault("HF_ENDPOINT", "").strip();
        if (endpoint.isEmpty()) endpoint = DEFAULT_ENDPOINT;
        try {
            URI uri = new URI(endpoint);
            if (uri.getScheme() == null || uri.getHost() == null) throw new java.net.URISyntaxException(endpoint, "no host");
            return uri;
        } catch (java.net.URISyntaxException e) {
            throw new FsException("HF_ENDPOINT is not an http(s) URL: " + endpoint);
        }
    }

    private String token() {
        String token = environment.get("HF_TOKEN");
        return token == null || token.isBlank() ? null : token.strip();
    }
}
