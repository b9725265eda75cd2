package fs.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.Quoted;
import fs.json.StrictJson;
import fs.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The weights of a Hugging Face model directory: one model.safetensors, the shards a model.safetensors.index.json
 * names, or the only *.safetensors file there. Every file is mapped once; {@link #close()} unmaps them all.
 */
public final class Checkpoint implements AutoCloseable {
    public static final String SINGLE_FILE = "model.safetensors";
    public static final String INDEX_FILE = "model.safetensors.index.json";
    private static final long MAX_INDEX_BYTES = 100L * 1000 * 1000;
    /** A weight_map can name many tensors; a message lists this many of those missing and counts the rest. */
    private static final int MAX_LISTED = 5;

    private final Path directory;
    private final List<SafetensorsFile> files;
    private final List<Tensor> tensors;
    private final Map<String, Tensor> tensorsByName;

    private Checkpoint(Path directory, List<SafetensorsFile> files, Map<String, Tensor> tensorsByName) {
        this.directory = directory;
        this.files = List.copyOf(files);
        this.tensors = List.copyOf(tensorsByName.values());
        this.tensorsByName = Collections.unmodifiableMap(tensorsByName);
    }

    /** Opens the weights in {@code directory}; any problem is one FsException naming the file and tensor. */
    public static Checkpoint open(Path directory) {
        if (!Files.exists(directory)) throw new FsException(directory + ": no such model directory");
        if (!Files.isDirectory(directory)) throw new FsException(directory + ": not a directory");
        Path index = directory.resolve(INDEX_FILE);
        if (Files.exists(index)) return openSharded(directory, index);
        Path single = directory.resolve(SINGLE_FILE);
        if (Files.exists(single)) return openFiles(directory, List.of(single));
        List<Path> candidates = safetensorsFilesIn(directory);
        if (candidates.size() == 1) return openFiles(directory, candidates);
        throw new FsException(candidates.isEmpty()
                ? directory + ": no .safetensors file in this directory"
                : directory + ": " + candidates.size() + " .safetensors files but no " + INDEX_FILE
                        + " to say how they belong together");
    }

    private static List<Path> safetensorsFilesIn(Path directory) {
        try (Stream<Path> entries = Files.list(directory)) {
            return entries.filter(p -> p.getFileName().toString().endsWith(".safetensors"))
                    .filter(Files::isRegularFile)
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new FsException(directory + ": cannot list: " + e.getMessage(), e);
        }
    }

    private static Checkpoint openSharded(Path directory, Path index) {
        JsonNode weightMap = StrictJson.readObjectFile(index, MAX_INDEX_BYTES).get("weight_map");
        if (weightMap == null || !weightMap.isObject()) {
            throw new FsException(index + ": weight_map is " + (weightMap == null ? "missing" : "not an object"));
        }
        // Shard names sort in shard order (model-00001-of-00002...), which is the order inspect should list them.
        Map<Path, List<String>> namesByFile = new TreeMap<>();
        for (var field : weightMap.properties()) {
            JsonNode file = field.getValue();
            if (!file.isTextual()) {
                throw new FsException(index + ": weight_map entry " + Quoted.quote(field.getKey()) + " must be a file name");
            }
            Path shard = shard(directory, file.textValue());
            if (shard == null || !shard.startsWith(directory.normalize()) || shard.equals(directory.normalize())) {
                throw new FsException(index + ": weight_map entry " + Quoted.quote(field.getKey()) + " names "
                        + Quoted.quote(file.textValue()) + ", which is not a file inside " + directory);
            }
            if (!Files.isRegularFile(shard)) {
                throw new FsException(index + ": tensor " + Quoted.quote(field.getKey()) + " is in shard "
                        + Quoted.quote(file.textValue()) + ", which does not exist");
            }
            namesByFile.computeIfAbsent(shard, f -> new ArrayList<>()).add(field.getKey());
        }
        if (namesByFile.isEmpty()) throw new FsException(index + ": weight_map lists no tensors");
        Checkpoint checkpoint = openFiles(directory, List.copyOf(namesByFile.keySet()));
        try {
            List<String> absent = new ArrayList<>();
            for (SafetensorsFile file : checkpoint.files) {
                for (String name : namesByFile.get(file.path())) {
                    if (file.tensor(name).isEmpty()) absent.add(Quoted.quote(name) + " is not in " + file.path().getFileName());
                }
            }
            if (!absent.isEmpty()) {
                String shown = String.join("; ", absent.subList(0, Math.min(absent.size(), MAX_LISTED)));
                throw new FsException(index + ": tensors listed in weight_map are missing from their shards: " + shown
                        + (absent.size() > MAX_LISTED ? "; and " + (absent.size() - MAX_LISTED) + " more" : ""));
            }
            return checkpoint;
        } catch (RuntimeException e) {
            checkpoint.close();
            throw e;
        }
    }

    /** The shard a weight_map entry names, or null when the name is no path at all (a NUL in it, say). */
    private static Path shard(Path directory, String name) {
        try {
            return directory.resolve(name).normalize();
        } catch (InvalidPathException e) {
            return null;
        }
    }

    private static Checkpoint openFiles(Path directory, List<Path> paths) {
        List<SafetensorsFile> files = new ArrayList<>();
        try {
            Map<String, Tensor> tensorsByName = new LinkedHashMap<>();
            Map<String, Path> fileOfTensor = new LinkedHashMap<>();
            for (Path path : paths) {
                SafetensorsFile file = SafetensorsFile.open(path);
                files.add(file);
                for (Tensor tensor : file.tensors()) {
                    Path other = fileOfTensor.putIfAbsent(tensor.name(), path);
                    if (other != null) {
                        throw new FsException(directory + ": tensor " + Quoted.quote(tensor.name()) + " is in both "
                                + other.getFileName() + " and " + path.getFileName());
                    }
                    tensorsByName.put(tensor.name(), tensor);
                }
            }
            return new Checkpoint(directory, files, tensorsByName);
        } catch (RuntimeException e) {
            files.forEach(SafetensorsFile::close);
            throw e;
        }
    }

    public Path directory() {
        return directory;
    }

    /** The mapped files, shards in name order; each lists its own tensors. */
    public List<SafetensorsFile> files() {
        return files;
    }

    /** Every tensor of every file, in file order and, within a file, in data order. */
    public List<Tensor> tensors() {
        return tensors;
    }

    public Optional<Tensor> find(String name) {
        return Optional.ofNullable(tensorsByName.get(name));
    }

    /** The tensor called {@code name}, or an FsException naming the checkpoint when there is none. */
    public Tensor tensor(String name) {
        Tensor tensor = tensorsByName.get(name);
        if (tensor == null) throw new FsException(directory + ": checkpoint has no tensor " + Quoted.quote(name));
        return tensor;
    }

    /** The first mapped file that was truncated or written to since it was opened, if any (a stat() per file). */
    public Optional<Path> changedFile() {
        return files.stream().filter(SafetensorsFile::changedSinceOpen).map(SafetensorsFile::path).findFirst();
    }

    /** Unmaps every file; the tensors' data becomes inaccessible. */
    @Override
    public void close() {
        files.forEach(SafetensorsFile::close);
    }
}
