package fs.safetensors;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.tensor.DType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Writes small safetensors files for tests: well-formed ones through the builder, corrupt ones through writeRaw. */
public final class SafetensorsWriter {
    private record Pending(String name, DType dtype, long[] shape, byte[] data) {}

    private final Map<String, String> metadata = new LinkedHashMap<>();
    private final List<Pending> tensors = new ArrayList<>();

    public SafetensorsWriter metadata(String key, String value) {
        metadata.put(key, value);
        return this;
    }

    public SafetensorsWriter tensor(String name, DType dtype, long[] shape, byte[] data) {
        tensors.add(new Pending(name, dtype, shape.clone(), data.clone()));
        return this;
    }

    public SafetensorsWriter f32(String name, long[] shape, float... values) {
        ByteBuffer buffer = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float value : values) buffer.putFloat(value);
        return tensor(name, DType.F32, shape, buffer.array());
    }

    /** bfloat16 is the top half of a float32: exact for values with at most 8 significant bits. */
    public SafetensorsWriter bf16(String name, long[] shape, float... values) {
        ByteBuffer buffer = ByteBuffer.allocate(values.length * 2).order(ByteOrder.LITTLE_ENDIAN);
        for (float value : values) buffer.putShort((short) (Float.floatToRawIntBits(value) >>> 16));
        return tensor(name, DType.BF16, shape, buffer.array());
    }

    public SafetensorsWriter f16(String name, long[] shape, float... values) {
        ByteBuffer buffer = ByteBuffer.allocate(values.length * 2).order(ByteOrder.LITTLE_ENDIAN);
        for (float value : values) buffer.putShort(Float.floatToFloat16(value));
        return tensor(name, DType.F16, shape, buffer.array());
    }

    /** A tensor of the given shape whose bytes are all zero. */
    public SafetensorsWriter zeros(String name, DType dtype, long... shape) {
        long count = 1;
        for (long dim : shape) count *= dim;
        return tensor(name, dtype, shape, new byte[Math.toIntExact(count * dtype.blockBytes())]);
    }

    /** Writes the tensors contiguously in the order added, the header padded with spaces to 8 bytes as upstream does. */
    public void write(Path file) {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode header = mapper.createObjectNode();
        if (!metadata.isEmpty()) {
            ObjectNode meta = header.putObject("__metadata__");
            metadata.forEach(meta::put);
        }
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        for (Pending tensor : tensors) {
            ObjectNode entry = header.putObject(tensor.name());
            entry.put("dtype", tensor.dtype().name());
            var shape = entry.putArray("shape");
            for (long dim : tensor.shape()) shape.add(dim);
            var offsets = entry.putArray("data_offsets");
            offsets.add(data.size());
            data.writeBytes(tensor.data());
            offsets.add(data.size());
        }
        StringBuilder json = new StringBuilder(header.toString());
        while (json.toString().getBytes(StandardCharsets.UTF_8).length % 8 != 0) json.append(' ');
        writeRaw(file, json.toString(), data.toByteArray());
    }

    /** An 8-byte header size that matches {@code headerJson}, the JSON, then {@code data}. */
    public static void writeRaw(Path file, String headerJson, byte[] data) {
        byte[] json = headerJson.getBytes(StandardCharsets.UTF_8);
        writeRaw(file, json.length, concat(json, data));
    }

    /** An arbitrary 8-byte header size followed by {@code rest}. */
    public static void writeRaw(Path file, long headerSize, byte[] rest) {
        ByteBuffer size = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(headerSize);
        try {
            Files.write(file, concat(size.array(), rest));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] both = new byte[a.length + b.length];
        System.arraycopy(a, 0, both, 0, a.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }
}
