package fs.hub;

import fs.FsException;
import fs.Quoted;
import fs.safetensors.SafetensorsFile;
import fs.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A Hugging Face repo's weights as their safetensors headers describe them, read over HTTP without the weights: two
 * Range requests a file (the 8-byte header size, then the header), the file's size from the hub's metadata. The
 * small files (config.json, generation_config.json, model.safetensors.index.json) are fetched into the cache as a
 * download would store them, into {@code snapshot}. Each header is checked as {@link SafetensorsFile#open} checks it.
 *
 * @param commit    the commit main resolved to; every file was read at it
 * @param snapshot  the cache folder of that commit, which holds config.json but not the weights
 * @param files     the weights files in the order a local checkpoint lists them
 * @param bytesRead the bytes of the weights files that were fetched: their headers and size fields
 */
public record RemoteHeaders(RepoId repo, String commit, Path snapshot, List<WeightsFile> files, long bytesRead) {
    /** A weight_map can name many tensors; a message lists this many of those missing and counts the rest. */
    private static final int MAX_LISTED = 5;

    /**
     * One safetensors file of the repo: its path in the repo, its size on the hub, and its tensors without their
     * bytes (see {@link SafetensorsFile#headerTensors}).
     */
    public record WeightsFile(String name, long size, List<Tensor> tensors) {
        public WeightsFile {
            tensors = List.copyOf(tensors);
        }
    }

    public RemoteHeaders {
        files = List.copyOf(files);
    }

    /** Every tensor of every file, in file order and, within a file, in data order. */
    public List<Tensor> tensors() {
        return files.stream().flatMap(file -> file.tensors().stream()).toList();
    }

    /** The sizes of every weights file together: what downloading them would fetch. */
    public long totalSize() {
        return files.stream().mapToLong(WeightsFile::size).sum();
    }

    /**
     * Reads the headers of the weights of {@code repo} at the commit main points to: model.safetensors, else the
     * shards model.safetensors.index.json names (as a download would choose).
     */
    static RemoteHeaders read(HubClient client, HubCache cache, RepoId repo, DownloadProgress progress)
            throws IOException {
        HubClient.FileInfo config = ModelResolver.mainConfig(client, repo);
        String commit = config.commit();
        Path snapshot = cache.snapshotDir(repo, commit);
        ModelResolver.Downloads downloads = new ModelResolver.Downloads(client, cache, repo, commit, progress);
        downloads.store(ModelFiles.CONFIG, config);
        downloads.fetch(ModelFiles.GENERATION_CONFIG, false);

        Optional<HubClient.FileInfo> single = client.fileInfo(repo, commit, ModelFiles.WEIGHTS);
        List<String> names;
        Map<String, String> weightMap = Map.of();
        if (single.isPresent()) {
            names = List.of(ModelFiles.WEIGHTS);
        } else {
            downloads.fetch(ModelFiles.WEIGHTS_INDEX, true);
            weightMap = ModelFiles.weightMap(snapshot.resolve(ModelFiles.WEIGHTS_INDEX));
            // Sorted as Checkpoint lists shards (model-00001-of-00002... sort in shard order).
            names = weightMap.values().stream().distinct().sorted().toList();
        }

        List<WeightsFile> files = new ArrayList<>();
        Map<String, String> fileOfTensor = new HashMap<>();
        long bytesRead = 0;
        for (String name : names) {
            HubClient.FileInfo info = single.isPresent() ? single.get() : client.fileInfo(repo, commit, name)
                    .orElseThrow(() -> new FsException(repo + " at commit " + commit + " has no " + name
                            + " on the Hugging Face hub: not a model repo fs can run"));
            if (info.size() < 0) throw new IOException("the hub sent no size for " + name + " of " + repo);
            String where = repo + "/" + name; // what errors name: the file as the hub knows it
            byte[] sizeField = info.size() < Long.BYTES ? new byte[0] : client.range(info.location(), 0, Long.BYTES);
            long headerSize = SafetensorsFile.headerSize(sizeField, info.size(), where);
            byte[] json = headerSize == 0 ? new byte[0] : client.range(info.location(), Long.BYTES, (int) headerSize);
            bytesRead += Long.BYTES + headerSize;
            List<Tensor> tensors = SafetensorsFile.headerTensors(json, info.size(), where);
            for (Tensor tensor : tensors) {
                // As a local checkpoint refuses it: two shards with one name would leave which one counts open.
                String other = fileOfTensor.putIfAbsent(tensor.name(), name);
                if (other != null) {
                    throw new FsException(repo + ": tensor " + Quoted.quote(tensor.name()) + " is in both " + other
                            + " and " + name);
                }
            }
            files.add(new WeightsFile(name, info.size(), tensors));
        }
        checkTheIndexMatches(repo, weightMap, fileOfTensor);
        return new RemoteHeaders(repo, commit, snapshot, files, bytesRead);
    }

    /** As a local checkpoint refuses it: a tensor the index places in a shard whose header does not list it. */
    private static void checkTheIndexMatches(RepoId repo, Map<String, String> weightMap,
            Map<String, String> fileOfTensor) {
        List<String> absent = new ArrayList<>();
        weightMap.forEach((tensor, shard) -> {
            if (!shard.equals(fileOfTensor.get(tensor))) absent.add(Quoted.quote(tensor) + " is not in " + shard);
        });
        if (absent.isEmpty()) return;
        String shown = String.join("; ", absent.subList(0, Math.min(absent.size(), MAX_LISTED)));
        throw new FsException(repo + "/" + ModelFiles.WEIGHTS_INDEX + ": tensors listed in weight_map are missing "
                + "from their shards: " + shown
                + (absent.size() > MAX_LISTED ? "; and " + (absent.size() - MAX_LISTED) + " more" : ""));
    }
}
