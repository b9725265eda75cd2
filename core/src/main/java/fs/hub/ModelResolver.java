package fs.hub;

import fs.FsException;
import fs.progress.Terminal;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Turns the MODEL argument of a command into a local model: a directory or a GGUF file as given, a Hugging Face repo id
 * ({@code Qwen/Qwen3-0.6B}) found in, or downloaded into, the Hugging Face cache (see {@link HubCache}), or one GGUF
 * file of a repo named by its quantization tag ({@code Qwen/Qwen3-0.6B-GGUF:Q8_0}, see {@link GgufTag}), through the
 * same cache.
 *
 * <p>A complete cached snapshot of "main" is used as it is, without asking the hub about newer commits. Otherwise the
 * hub resolves "main" to a commit and the missing files of that commit are downloaded: config.json,
 * generation_config.json (when the repo has one), tokenizer.json, tokenizer_config.json, and model.safetensors or
 * model.safetensors.index.json with its shards.
 *
 * <p>{@link #remoteHeaders} serves {@code fs inspect}: for a repo that is not complete in the cache it reads the
 * safetensors headers over HTTP (see {@link RemoteHeaders}) instead of downloading the weights.
 *
 * <p>Environment: HF_HUB_CACHE / HF_HOME / XDG_CACHE_HOME (where the cache is), HF_ENDPOINT (default
 * https://huggingface.co), HF_TOKEN (sent as a Bearer token), HF_HUB_OFFLINE=1 (cache only).
 */
public final class ModelResolver {
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

    private static final String DEFAULT_ENDPOINT = "https://huggingface.co";
    /** What a user without the hub can run instead of a repo, or of a repo's GGUF file. */
    private static final String LOCAL_DIRECTORY = "pass a local directory";
    private static final String LOCAL_GGUF = "pass the path of a .gguf file";
    private static final Set<String> TRUE_VALUES = Set.of("1", "on", "yes", "true");
    private static final Pattern COMMIT = Pattern.compile("[0-9a-f]{40}");
    private static final String GGUF_EXTENSION = ".gguf";
    /** A hub file that becomes a path in the cache: plain names, '/' between folders, no leading dot or slash. */
    private static final Pattern REPO_PATH = Pattern.compile("[A-Za-z0-9_+-][A-Za-z0-9_.+-]*(/[A-Za-z0-9_+-][A-Za-z0-9_.+-]*)*");
    private static final byte[] GGUF_MAGIC = {'G', 'G', 'U', 'F'};

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
        return new ModelResolver(System.getenv(), log, Terminal.stderrIsTerminal()).resolveModel(model);
    }

    /** {@link #remoteHeaders(String)} with the process environment, progress on {@code log}. */
    public static Optional<RemoteHeaders> remoteHeaders(String model, PrintWriter log) {
        return new ModelResolver(System.getenv(), log, Terminal.stderrIsTerminal()).remoteHeaders(model);
    }

    /**
     * The local directory or GGUF file of {@code model}: the directory (which must contain config.json) or file itself
     * when it exists, else the cache snapshot of the Hugging Face repo it names, or the cached GGUF file its tag names,
     * downloaded first when needed. A name in an existing folder that names nothing there is a mistyped path, and
     * the error names the nearest entry of that folder.
     *
     * @throws FsException with one line saying what is wrong and what to do
     */
    public Path resolveModel(String model) {
        Optional<Path> local = existingPath(model);
        if (local.isPresent()) return checkedModel(local.get());
        boolean gguf = model.toLowerCase(Locale.ROOT).endsWith(GGUF_EXTENSION);
        // A name whose folder exists (models/tiny-tiedd) is a mistyped path, though it may also spell a repo id.
        Optional<MissingPath> missing = MissingPath.of(model, gguf);
        if (missing.isPresent()) throw new FsException(missing.get().message(gguf ? "file" : "directory"));
        if (gguf) throw new FsException(model + ": no such file");
        Optional<GgufTag> tagged = GgufTag.parse(model);
        RepoId repo = tagged.map(GgufTag::repo).or(() -> RepoId.parse(model)).orElseThrow(() -> new FsException(
                "'" + model + "' is not a directory and not a Hugging Face repo id (owner/name, e.g. Qwen/Qwen3-0.6B)"));
        try {
            return tagged.isPresent() ? resolveGguf(tagged.get()) : resolveRepo(repo);
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

    /** A model directory with its config.json, or a GGUF file (by its name or its first bytes). */
    private static Path checkedModel(Path path) {
        if (!Files.isDirectory(path)) {
            if (path.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(GGUF_EXTENSION) || isGguf(path)) {
                return path;
            }
            throw new FsException(path + " is a file, not a model directory (one with config.json, tokenizer.json "
                    + "and safetensors weights) nor a GGUF file");
        }
        if (!Files.isRegularFile(path.resolve(ModelFiles.CONFIG))) {
            throw new FsException(path + " has no " + ModelFiles.CONFIG + ": not a Hugging Face model directory");
        }
        return path;
    }

    private static boolean isGguf(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return Arrays.equals(in.readNBytes(GGUF_MAGIC.length), GGUF_MAGIC);
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * For {@code fs inspect}: when {@code model} names a Hugging Face repo (not a path, not repo:QUANT) whose snapshot
     * of main is not complete in the cache, its config.json (and generation_config.json) fetched into the cache and
     * the headers of its safetensors weights read with HTTP Range requests, the weights themselves left on the hub;
     * empty when {@link #resolveModel} would find the model without the hub, or would refuse it.
     *
     * @throws FsException with one line, as {@link #resolveModel} throws them (HF_HUB_OFFLINE, a 404, the network)
     */
    public Optional<RemoteHeaders> remoteHeaders(String model) {
        if (existingPath(model).isPresent() || MissingPath.of(model, false).isPresent()
                || model.toLowerCase(Locale.ROOT).endsWith(GGUF_EXTENSION) || GgufTag.parse(model).isPresent()) {
            return Optional.empty();
        }
        Optional<RepoId> parsed = RepoId.parse(model);
        if (parsed.isEmpty()) return Optional.empty();
        RepoId repo = parsed.get();
        try {
            HubCache cache = HubCache.locate(environment);
            Optional<String> inCache = shortfall(cache, repo, cache.mainSnapshot(repo));
            if (inCache.isEmpty()) return Optional.empty();
            DownloadProgress progress = new DownloadProgress(log, progressBar);
            return Optional.of(online(repo.toString(), inCache.get(), LOCAL_DIRECTORY,
                    client -> RemoteHeaders.read(client, cache, repo, progress)));
        } catch (IOException e) {
            throw new FsException(repo + ": cannot use the Hugging Face cache (" + e + ")", e);
        }
    }

    private Path resolveRepo(RepoId repo) throws IOException {
        HubCache cache = HubCache.locate(environment);
        Optional<Path> cached = cache.mainSnapshot(repo);
        Optional<String> inCache = shortfall(cache, repo, cached);
        if (inCache.isEmpty()) return cached.orElseThrow();
        return online(repo.toString(), inCache.get(), LOCAL_DIRECTORY, client -> download(client, cache, repo));
    }

    /** How the cache falls short of a complete snapshot of main ({@code cached}), for messages; empty if it does not. */
    private static Optional<String> shortfall(HubCache cache, RepoId repo, Optional<Path> cached) {
        List<String> missing = cached.map(ModelFiles::missing).orElse(List.of());
        if (cached.isPresent() && missing.isEmpty()) return Optional.empty();
        return Optional.of(cached.isPresent()
                ? "is only partly in the Hugging Face cache (" + cache.repoDir(repo) + " lacks " + String.join(", ", missing) + ")"
                : "is not in the Hugging Face cache (" + cache.repoDir(repo) + ")");
    }

    /** What is done with the hub once the cache cannot answer. */
    private interface HubWork<T> {
        T run(HubClient client) throws IOException;
    }

    /**
     * Runs {@code work} against the hub unless HF_HUB_OFFLINE forbids it, turning each way it can fail into one line
     * that says what {@code model} lacks ({@code inCache}) and what the user can do: without the hub, fs pull it once
     * online, or run a {@code local} copy.
     */
    private <T> T online(String model, String inCache, String local, HubWork<T> work) throws IOException {
        String pullLater = "run 'fs pull " + model + "' when online";
        if (TRUE_VALUES.contains(environment.getOrDefault("HF_HUB_OFFLINE", "").strip().toLowerCase(Locale.ROOT))) {
            throw new FsException(model + " " + inCache + " and HF_HUB_OFFLINE is set: " + pullLater
                    + " (with HF_HUB_OFFLINE unset), or " + local);
        }
        try (HubClient client = new HubClient(endpoint(), token(), CONNECT_TIMEOUT, readTimeout)) {
            try {
                return work.run(client);
            } catch (HubClient.StatusException e) {
                if (e.status == 401 || e.status == 403) {
                    throw new FsException(model + ": the Hugging Face hub refused access (" + e.getMessage() + "): the "
                            + "repo does not exist, or it is private or gated: check the name"
                            + (token() == null ? ", or set HF_TOKEN to a token that has access" : " and HF_TOKEN")
                            + " (it is not a local directory either)", e);
                }
                throw new FsException(model + " " + inCache + " and could not be downloaded (" + e.getMessage()
                        + "): try again later, or " + local, e);
            } catch (HubClient.NetworkException e) {
                String retry = !e.unreachable ? "run again (downloads resume)"
                        : customEndpoint() ? "HF_ENDPOINT (" + client.endpoint() + ") cannot be reached: check it and "
                                + "run again (downloads resume)"
                        : pullLater + " (downloads resume)";
                throw new FsException(model + " " + inCache + " and could not be downloaded (" + e.getMessage()
                        + "): " + retry + ", or " + local, e);
            } catch (FileSystemException e) {
                throw new FsException(model + " " + inCache + " and could not be stored there (" + e.getFile() + ": "
                        + (e.getReason() != null ? e.getReason() : e.getClass().getSimpleName()) + ")", e);
            } catch (IOException e) {
                throw new FsException(model + " " + inCache + " and could not be downloaded (" + e.getMessage() + ")", e);
            }
        }
    }

    /**
     * The GGUF file of a repo that {@code tagged}'s tag names: the one in the cached snapshot of main when it is there
     * (no request made), else the one the hub lists for main, downloaded into the cache.
     */
    private Path resolveGguf(GgufTag tagged) throws IOException {
        RepoId repo = tagged.repo();
        HubCache cache = HubCache.locate(environment);
        Optional<Path> cached = cache.mainSnapshot(repo);
        if (cached.isPresent()) {
            List<String> matching = matching(tagged, snapshotFiles(cached.get()));
            if (matching.size() == 1) return cached.get().resolve(matching.getFirst());
            if (matching.size() > 1) throw ambiguous(tagged, matching, "in the cache");
        }
        String inCache = "is not in the Hugging Face cache (" + cache.repoDir(repo) + ")";
        return online(tagged.toString(), inCache, LOCAL_GGUF, client -> downloadGguf(client, cache, tagged));
    }

    private Path downloadGguf(HubClient client, HubCache cache, GgufTag tagged) throws IOException {
        RepoId repo = tagged.repo();
        HubClient.RepoFiles files = client.repoFiles(repo, "main").orElseThrow(() -> new FsException(
                repo + ": the Hugging Face hub has no such repo: check the repo id; it is not a local file either"));
        String commit = files.commit();
        if (!COMMIT.matcher(commit).matches()) {
            throw new IOException("the hub named an unusable commit '" + commit + "' for " + repo);
        }
        List<String> matching = matching(tagged, files.paths());
        if (matching.size() > 1) throw ambiguous(tagged, matching, "on the hub");
        if (matching.isEmpty()) {
            List<String> tags = files.paths().stream().map(GgufTag::tagOf).filter(t -> t != null).distinct().toList();
            throw new FsException(repo + " has no GGUF file for the tag '" + tagged.tag() + "' "
                    + (tags.isEmpty() ? "(it has no .gguf files at all)" : "(its tags: " + String.join(", ", tags) + ")"));
        }
        String file = matching.getFirst();
        if (!REPO_PATH.matcher(file).matches() || file.contains("..")) {
            throw new FsException(repo + ": the GGUF file " + file + " does not have a plain file name fs can store");
        }
        HubClient.FileInfo info = client.fileInfo(repo, commit, file).orElseThrow(() -> new IOException(
                "the hub lists " + file + " but has no such file at commit " + commit));
        log.println("fetching " + file + " of " + repo + " (commit " + commit + ") from " + client.endpoint()
                + " into " + cache.repoDir(repo));
        log.flush();
        new Downloads(client, cache, repo, commit, new DownloadProgress(log, progressBar)).store(file, info);
        cache.writeMainRef(repo, commit);
        return cache.snapshotDir(repo, commit).resolve(file);
    }

    private static List<String> matching(GgufTag tagged, List<String> paths) {
        return paths.stream().filter(tagged::matches).toList();
    }

    private static FsException ambiguous(GgufTag tagged, List<String> matching, String where) {
        return new FsException(tagged + ": the tag '" + tagged.tag() + "' names " + matching.size() + " GGUF files "
                + where + " (" + String.join(", ", matching) + "): give the whole tag of one, or its path");
    }

    /** Every file of a cached snapshot, as a path relative to it with '/' separators. */
    private static List<String> snapshotFiles(Path snapshot) throws IOException {
        try (var files = Files.walk(snapshot, 4)) {
            return files.filter(Files::isRegularFile)
                    .map(file -> snapshot.relativize(file).toString().replace(java.io.File.separatorChar, '/'))
                    .sorted()
                    .toList();
        }
    }

    /** Downloads what the snapshot of main's current commit lacks, then points refs/main at it. */
    private Path download(HubClient client, HubCache cache, RepoId repo) throws IOException {
        HubClient.FileInfo config = mainConfig(client, repo);
        String commit = config.commit();
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

    /** The hub's metadata for config.json at main, whose commit is the one every other file is then fetched at. */
    static HubClient.FileInfo mainConfig(HubClient client, RepoId repo) throws IOException {
        HubClient.FileInfo config = client.fileInfo(repo, "main", ModelFiles.CONFIG).orElseThrow(() ->
                new FsException(repo + ": the Hugging Face hub has no " + ModelFiles.CONFIG + " in this repo ("
                        + client.resolveUrl(repo, "main", ModelFiles.CONFIG) + " is 404): check the repo id; it is "
                        + "not a local directory either"));
        if (!COMMIT.matcher(config.commit()).matches()) {
            throw new IOException("the hub named an unusable commit '" + config.commit() + "' for " + repo);
        }
        return config;
    }

    /** Fills one snapshot of one repo, file by file. */
    record Downloads(HubClient client, HubCache cache, RepoId repo, String commit, DownloadProgress progress) {

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
