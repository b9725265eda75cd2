package fs.gguf;

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
import java.util.List;

/**
 * Writes small GGUF files for tests: well-formed ones through the typed methods, corrupt ones through the raw ones
 * (any value type id, any tensor info, overridden counts) or by editing {@link #bytes()}.
 */
public final class GgufWriter {
    private record TensorInfo(String name, long[] dims, long typeId, long offset) {}

    private final ByteArrayOutputStream metadata = new ByteArrayOutputStream();
    private final List<TensorInfo> infos = new ArrayList<>();
    private final ByteArrayOutputStream data = new ByteArrayOutputStream();
    private int version = 3;
    private int alignment = GgufHeader.DEFAULT_ALIGNMENT;
    private long kvCount;
    private Long kvCountOverride;
    private Long tensorCountOverride;

    public GgufWriter version(int version) {
        this.version = version;
        return this;
    }

    /** Writes general.alignment and lays the data out with it. */
    public GgufWriter alignment(int alignment) {
        this.alignment = alignment;
        return u32("general.alignment", alignment);
    }

    public GgufWriter u8(String key, int value) {
        return raw(key, GgufValueType.UINT8.id(), new byte[] {(byte) value});
    }

    public GgufWriter i8(String key, int value) {
        return raw(key, GgufValueType.INT8.id(), new byte[] {(byte) value});
    }

    public GgufWriter u16(String key, int value) {
        return raw(key, GgufValueType.UINT16.id(), le(2).putShort((short) value).array());
    }

    public GgufWriter i16(String key, int value) {
        return raw(key, GgufValueType.INT16.id(), le(2).putShort((short) value).array());
    }

    public GgufWriter u32(String key, long value) {
        return raw(key, GgufValueType.UINT32.id(), le(4).putInt((int) value).array());
    }

    public GgufWriter i32(String key, int value) {
        return raw(key, GgufValueType.INT32.id(), le(4).putInt(value).array());
    }

    public GgufWriter u64(String key, long value) {
        return raw(key, GgufValueType.UINT64.id(), le(8).putLong(value).array());
    }

    public GgufWriter i64(String key, long value) {
        return raw(key, GgufValueType.INT64.id(), le(8).putLong(value).array());
    }

    public GgufWriter f32(String key, float value) {
        return raw(key, GgufValueType.FLOAT32.id(), le(4).putFloat(value).array());
    }

    public GgufWriter f64(String key, double value) {
        return raw(key, GgufValueType.FLOAT64.id(), le(8).putDouble(value).array());
    }

    public GgufWriter bool(String key, boolean value) {
        return raw(key, GgufValueType.BOOL.id(), new byte[] {(byte) (value ? 1 : 0)});
    }

    public GgufWriter string(String key, String value) {
        return raw(key, GgufValueType.STRING.id(), string(value));
    }

    /** An array of {@code elementType}: elements are Numbers, Booleans, Strings, or byte[] from {@link #array}. */
    public GgufWriter array(String key, GgufValueType elementType, Object... elements) {
        return raw(key, GgufValueType.ARRAY.id(), array(elementType, elements));
    }

    /** A key with any value type id and any encoded value: the way to write what a real writer never would. */
    public GgufWriter raw(String key, long typeId, byte[] value) {
        return rawKey(string(key), typeId, value);
    }

    public GgufWriter rawKey(byte[] encodedKey, long typeId, byte[] value) {
        metadata.writeBytes(encodedKey);
        metadata.writeBytes(le(4).putInt((int) typeId).array());
        metadata.writeBytes(value);
        kvCount++;
        return this;
    }

    /** A tensor whose data is placed after the previous one's, aligned; {@code dims} fastest first, as GGUF has it. */
    public GgufWriter tensor(String name, DType type, long[] dims, byte[] bytes) {
        while (data.size() % alignment != 0) data.write(0);
        infos.add(new TensorInfo(name, dims.clone(), type.ggmlId(), data.size()));
        data.writeBytes(bytes);
        return this;
    }

    /** A tensor info as given, with no data of its own (pair it with {@link #data(int)}). */
    public GgufWriter tensorInfo(String name, long typeId, long offset, long... dims) {
        infos.add(new TensorInfo(name, dims.clone(), typeId, offset));
        return this;
    }

    /** Appends {@code bytes} zero bytes to the data section. */
    public GgufWriter data(int bytes) {
        data.writeBytes(new byte[bytes]);
        return this;
    }

    public GgufWriter counts(long tensorCount, long kvCount) {
        this.tensorCountOverride = tensorCount;
        this.kvCountOverride = kvCount;
        return this;
    }

    public byte[] bytes() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes("GGUF".getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(le(4).putInt(version).array());
        out.writeBytes(le(8).putLong(tensorCountOverride != null ? tensorCountOverride : infos.size()).array());
        out.writeBytes(le(8).putLong(kvCountOverride != null ? kvCountOverride : kvCount).array());
        out.writeBytes(metadata.toByteArray());
        for (TensorInfo info : infos) {
            out.writeBytes(string(info.name()));
            out.writeBytes(le(4).putInt(info.dims().length).array());
            for (long dim : info.dims()) out.writeBytes(le(8).putLong(dim).array());
            out.writeBytes(le(4).putInt((int) info.typeId()).array());
            out.writeBytes(le(8).putLong(info.offset()).array());
        }
        while (out.size() % alignment != 0) out.write(0);
        out.writeBytes(data.toByteArray());
        return out.toByteArray();
    }

    public Path write(Path file) {
        return write(file, bytes());
    }

    public static Path write(Path file, byte[] bytes) {
        try {
            return Files.write(file, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An encoded string: its UTF-8 byte count as a u64, then the bytes. */
    public static byte[] string(String value) {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(8 + utf8.length).order(ByteOrder.LITTLE_ENDIAN).putLong(utf8.length).put(utf8).array();
    }

    /** An encoded array value (element type, count, elements), also usable as an element of an array of arrays. */
    public static byte[] array(GgufValueType elementType, Object... elements) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(le(4).putInt(elementType.id()).array());
        out.writeBytes(le(8).putLong(elements.length).array());
        for (Object element : elements) out.writeBytes(encode(elementType, element));
        return out.toByteArray();
    }

    private static byte[] encode(GgufValueType type, Object element) {
        return switch (type) {
            case UINT8, INT8 -> new byte[] {((Number) element).byteValue()};
            case UINT16, INT16 -> le(2).putShort(((Number) element).shortValue()).array();
            case UINT32, INT32 -> le(4).putInt(((Number) element).intValue()).array();
            case UINT64, INT64 -> le(8).putLong(((Number) element).longValue()).array();
            case FLOAT32 -> le(4).putFloat(((Number) element).floatValue()).array();
            case FLOAT64 -> le(8).putDouble(((Number) element).doubleValue()).array();
            case BOOL -> new byte[] {(byte) ((Boolean) element ? 1 : 0)};
            case STRING -> string((String) element);
            case ARRAY -> (byte[]) element;
        };
    }

    private static ByteBuffer le(int bytes) {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }
}
