package fs.safetensors;

import static fs.json.JsonFields.kind;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.Quoted;
import fs.json.JsonFields;
import fs.json.StrictJson;
import fs.tensor.DType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON header of a safetensors file, validated against the size of the data section that follows it, so that
 * every entry can be sliced out of the mapping without further checks. {@code entries} are in data order.
 */
record SafetensorsHeader(List<Entry> entries, Map<String, String> metadata) {
    static final String METADATA_KEY = "__metadata__";
    private static final int MAX_DIMS_SHOWN = 8;

    /** One tensor: {@code begin} and {@code end} are byte offsets relative to the start of the data section. */
    record Entry(String name, DType dtype, long[] shape, long begin, long end) {}

    SafetensorsHeader {
        entries = List.copyOf(entries);
        metadata = Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
    }

    /** Parses and checks a header; {@code file} names the file in errors, {@code dataSize} bounds the offsets. */
    static SafetensorsHeader parse(byte[] json, long dataSize, String file) {
        JsonNode root = StrictJson.parseObject(json, 0, json.length, file + ": header");
        List<Entry> entries = new ArrayList<>();
        Map<String, String> metadata = Map.of();
        for (var field : root.properties()) {
            if (field.getKey().equals(METADATA_KEY)) {
                metadata = parseMetadata(field.getValue(), file);
            } else {
                entries.add(parseEntry(field.getKey(), field.getValue(), dataSize, file));
            }
        }
        entries.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end));
        checkTensorsCoverTheData(entries, dataSize, file);
        return new SafetensorsHeader(entries, metadata);
    }

    /**
     * The tensors must tile the data section exactly, as upstream safetensors requires: a stray byte before, between
     * or after them almost always means a header size or offsets that are off, so every tensor would be read shifted.
     */
    private static void checkTensorsCoverTheData(List<Entry> entries, long dataSize, String file) {
        if (entries.isEmpty()) {
            if (dataSize == 0) return;
            throw new FsException(file + ": the header lists no tensors but " + bytes(dataSize)
                    + " of data follow it");
        }
        Entry first = entries.getFirst();
        if (first.begin() > 0) {
            throw new FsException(file + ": " + bytes(first.begin()) + " before the first tensor " + Quoted.quote(first.name())
                    + " " + range(first) + " belong to no tensor");
        }
        for (int i = 1; i < entries.size(); i++) {
            Entry previous = entries.get(i - 1);
            Entry entry = entries.get(i);
            if (entry.begin() < previous.end()) {
                throw new FsException(file + ": tensor " + Quoted.quote(entry.name()) + ": data_offsets " + range(entry)
                        + " overlap tensor " + Quoted.quote(previous.name()) + " " + range(previous));
            }
            if (entry.begin() > previous.end()) {
                throw new FsException(file + ": " + bytes(entry.begin() - previous.end()) + " between tensor "
                        + Quoted.quote(previous.name()) + " " + range(previous) + " and tensor " + Quoted.quote(entry.name()) + " "
                        + range(entry) + " belong to no tensor");
            }
        }
        Entry last = entries.getLast();
        if (last.end() < dataSize) {
            throw new FsException(file + ": " + bytes(dataSize - last.end()) + " after the last tensor " + Quoted.quote(last.name())
                    + " " + range(last) + " belong to no tensor (is the header size at the start of the file wrong?)");
        }
    }

    private static String bytes(long count) {
        return count == 1 ? "1 byte" : count + " bytes";
    }

    private static Map<String, String> parseMetadata(JsonNode node, String file) {
        if (node.isNull()) return Map.of();
        if (!node.isObject()) {
            throw new FsException(file + ": " + METADATA_KEY + " must be an object of strings, found " + kind(node));
        }
        Map<String, String> metadata = new LinkedHashMap<>();
        for (var field : node.properties()) {
            if (!field.getValue().isTextual()) {
                throw new FsException(file + ": " + METADATA_KEY + " entry " + Quoted.quote(field.getKey())
                        + " must be a string, found " + kind(field.getValue()));
            }
            metadata.put(field.getKey(), field.getValue().textValue());
        }
        return metadata;
    }

    private static Entry parseEntry(String name, JsonNode node, long dataSize, String file) {
        String where = file + ": tensor " + Quoted.quote(name) + ": ";
        if (!node.isObject()) {
            throw new FsException(where + "expected an object with dtype, shape and data_offsets, found " + kind(node));
        }
        JsonFields fields = JsonFields.of(node, problem -> new FsException(where + problem));
        DType dtype = parseDType(fields, where);
        long[] shape = fields.longs("shape", -1);
        for (long dim : shape) {
            if (dim < 0) throw new FsException(where + "shape " + dims(shape) + " has a negative dimension");
        }
        long[] offsets = fields.longs("data_offsets", 2);
        long begin = offsets[0];
        long end = offsets[1];
        if (begin < 0 || end < 0) {
            throw new FsException(where + "data_offsets " + Arrays.toString(offsets) + " are negative");
        }
        if (begin > end) {
            throw new FsException(where + "data_offsets " + Arrays.toString(offsets) + " are reversed");
        }
        if (end > dataSize) {
            throw new FsException(where + "data_offsets " + Arrays.toString(offsets)
                    + " run past the end of the file (the data section is " + dataSize + " bytes)");
        }
        long expectedBytes;
        try {
            expectedBytes = dtype.blockBytes(); // safetensors dtypes are blocks of one element
            for (long dim : shape) expectedBytes = Math.multiplyExact(expectedBytes, dim);
        } catch (ArithmeticException e) {
            throw new FsException(where + "shape " + dims(shape) + " is too large to address");
        }
        if (end - begin != expectedBytes) {
            throw new FsException(where + "data_offsets " + Arrays.toString(offsets) + " hold " + (end - begin)
                    + " bytes but " + dtype + " " + dims(shape) + " needs " + expectedBytes);
        }
        return new Entry(name, dtype, shape, begin, end);
    }

    private static DType parseDType(JsonFields fields, String where) {
        String name = fields.text("dtype");
        return DType.fromSafetensorsName(name).orElseThrow(() -> new FsException(
                where + "unknown dtype " + Quoted.quote(name) + " (known: " + DType.safetensorsTypes() + ")"));
    }

    /** A shape as a message shows it: a file may claim thousands of dimensions, so only the first few are listed. */
    private static String dims(long[] shape) {
        if (shape.length <= MAX_DIMS_SHOWN) return Arrays.toString(shape);
        String first = Arrays.toString(Arrays.copyOf(shape, MAX_DIMS_SHOWN));
        return first.substring(0, first.length() - 1) + ", … (" + shape.length + " dimensions)]";
    }

    private static String range(Entry entry) {
        return "[" + entry.begin() + ", " + entry.end() + "]";
    }
}
