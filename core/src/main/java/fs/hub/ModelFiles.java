package fs.hub;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.Quoted;
import fs.json.StrictJson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** The files of a model repo that fs reads, and whether a folder has them all. */
final class ModelFiles {
    static final String CONFIG = "config.json";
    static final String GENERATION_CONFIG = "generation_config.json";
    static final String TOKENIZER = "tokenizer.json";
    static final String TOKENIZER_CONFIG = "tokenizer_config.json";
    static final String WEIGHTS = "model.safetensors";
    static final String WEIGHTS_INDEX = "model.safetensors.index.json";

    /** Needed besides the weights; generation_config.json is optional (defaults apply without it). */
    static final List<String> REQUIRED = List.of(CONFIG, TOKENIZER, TOKENIZER_CONFIG);

    // A shard name comes from a downloaded file and becomes a path: no separators, no leading dot, no "..".
    private static final long MAX_INDEX_BYTES = 100L * 1000 * 1000; // as Checkpoint allows
    private static final Pattern SHARD_NAME = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9_.-]*");

    private ModelFiles() {}

    /** The shard files an index's weight_map names, each once, in order of first mention. */
    static List<String> shards(Path index) {
        return List.copyOf(new LinkedHashSet<>(weightMap(index).values()));
    }

    /** An index's weight_map: the shard file of each tensor, in the index's order. */
    static Map<String, String> weightMap(Path index) {
        // Read as Checkpoint reads it later: plain-words errors, a duplicate key refused rather than one of two kept.
        JsonNode weightMap = StrictJson.readObjectFile(index, MAX_INDEX_BYTES).get("weight_map");
        if (weightMap == null || !weightMap.isObject() || weightMap.isEmpty()) {
            throw new FsException(index + ": has no weight_map naming the shard files");
        }
        Map<String, String> shards = new LinkedHashMap<>();
        for (var entry : weightMap.properties()) {
            JsonNode shard = entry.getValue();
            if (!shard.isTextual()) {
                throw new FsException(index + ": weight_map entry " + Quoted.quote(entry.getKey()) + " must be a file name");
            }
            String name = shard.textValue();
            if (!SHARD_NAME.matcher(name).matches() || name.contains("..")) {
                throw new FsException(index + ": weight_map names a shard that is not a plain file name: "
                        + Quoted.quote(name));
            }
            shards.put(entry.getKey(), name);
        }
        return Collections.unmodifiableMap(shards);
    }

    /** The files {@code dir} still lacks to be a complete model (broken links count as missing); empty if none. */
    static List<String> missing(Path dir) {
        List<String> missing = new ArrayList<>();
        for (String file : REQUIRED) {
            if (!Files.isRegularFile(dir.resolve(file))) missing.add(file);
        }
        if (Files.isRegularFile(dir.resolve(WEIGHTS))) return missing;
        Path index = dir.resolve(WEIGHTS_INDEX);
        if (!Files.isRegularFile(index)) {
            missing.add(WEIGHTS);
            return missing;
        }
        for (String shard : shards(index)) {
            if (!Files.isRegularFile(dir.resolve(shard))) missing.add(shard);
        }
        return missing;
    }
}
