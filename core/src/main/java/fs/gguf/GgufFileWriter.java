package fs.gguf;

import fs.FsException;
import fs.tensor.DType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes one GGUF version 3 file, streaming: {@link #create} writes the header (metadata, then every tensor's info),
 * and {@link #write} then takes each tensor's data in the order the infos list them, in pieces of any size, padding
 * each tensor to the alignment as it completes, so that no tensor need ever be held whole. The counterpart of
 * {@link GgufFile}, which reads what this writes.
 *
 * <p>The file is written under a temporary name in the target's directory and renamed to the target by
 * {@link #finish()} once every byte is there; closing without finishing (an exception, an interrupted run) deletes
 * it, and so does the JVM's exit on Ctrl-C, so the target's name only ever holds a complete file. One thread writes.
 */
public final class GgufFileWriter implements AutoCloseable {
    private static final int VERSION = 3;
    private static final int BUFFER_BYTES = 1 << 20;

    /** One tensor's info: {@code shape} is row-major, slowest dimension first, as {@link GgufTensor}'s. */
    public record TensorInfo(String name, DType type, long[] shape) {
        public TensorInfo {
            shape = shape.clone();
            if (!type.isGgmlType()) throw new IllegalArgumentException(name + ": " + type + " is not a ggml type");
            if (shape.length < 1 || shape.length > 4) {
                throw new IllegalArgumentException(name + ": GGUF tensors have 1 to 4 dimensions, not " + shape.length);
            }
            for (long dim : shape) {
                if (dim < 0) {
                    throw new IllegalArgumentException(name + ": negative dimension in " + Arrays.toString(shape));
                }
            }
            type.rowBytes(shape[shape.length - 1]); // rows must be whole blocks
        }

        @Override
        public long[] shape() {
            return shape.clone();
        }

        /** The bytes of its data: rows × the type's bytes per row. */
        public long bytes() {
            long bytes = type.rowBytes(shape[shape.length - 1]);
            for (int d = 0; d < shape.length - 1; d++) bytes = Math.multiplyExact(bytes, shape[d]);
            return bytes;
        }
    }

    private final Path target;
    private final Path partial;
    private final FileChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final List<TensorInfo> tensors;
    private final int alignment;
    /** The tensor whose data {@link #write} takes next, and how many of its bytes it has taken. */
    private int current;
    private long currentDone;
    private long position;
    private boolean finished;
    private boolean closed;

    private GgufFileWriter(Path target, Path partial, FileChannel channel, List<TensorInfo> tensors, int alignment) {
        this.target = target;
        this.partial = partial;
        this.channel = channel;
        this.tensors = tensors;
        this.alignment = alignment;
    }

    /**
     * Starts {@code target}: writes the header of a file with this metadata (in map order) and these tensors (in
     * list order; their data follows in the same order). {@code general.alignment}, when the metadata has it, must be
     * a UINT32 power of two; otherwise GGUF's 32 applies.
     */
    public static GgufFileWriter create(Path target, Map<String, GgufValue> metadata, List<TensorInfo> tensors) {
        int alignment = alignment(metadata);
        Set<String> names = new HashSet<>();
        for (TensorInfo tensor : tensors) {
            if (!names.add(tensor.name())) {
                throw new IllegalArgumentException("tensor " + tensor.name() + " appears twice");
            }
        }
        Path partial = target.toAbsolutePath().resolveSibling(
                "." + target.getFileName() + "." + Long.toHexString(new SecureRandom().nextLong() >>> 1) + ".partial");
        FileChannel channel;
        try {
            // not Files.createTempFile: its file is private to the user (0600), the finished file should have the
            // permissions any new file gets (the umask's)
            channel = FileChannel.open(partial, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new FsException(target + ": cannot create " + partial + ": " + reason(e), e);
        }
        partial.toFile().deleteOnExit(); // Ctrl-C ends the JVM without unwinding the writing thread
        GgufFileWriter writer = new GgufFileWriter(target, partial, channel, List.copyOf(tensors), alignment);
        try {
            writer.header(metadata);
        } catch (RuntimeException e) {
            writer.close();
            throw e;
        }
        return writer;
    }

    private static int alignment(Map<String, GgufValue> metadata) {
        GgufValue value = metadata.get(GgufHeader.ALIGNMENT_KEY);
        if (value == null) return GgufHeader.DEFAULT_ALIGNMENT;
        long alignment = value.type() == GgufValueType.UINT32 ? (Long) value.value() : 0;
        if (alignment <= 0 || alignment > 1 << 30 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException(
                    GgufHeader.ALIGNMENT_KEY + " must be a UINT32 power of two, not " + value);
        }
        return (int) alignment;
    }

    private void header(Map<String, GgufValue> metadata) {
        put(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0x46554747).array()); // "GGUF"
        u32(VERSION);
        u64(tensors.size());
        u64(metadata.size());
        for (Map.Entry<String, GgufValue> entry : metadata.entrySet()) {
            string(entry.getKey());
            u32(entry.getValue().type().id());
            value(entry.getKey(), entry.getValue().type(), entry.getValue().value());
        }
        long offset = 0;
        for (TensorInfo tensor : tensors) {
            long[] shape = tensor.shape();
            string(tensor.name());
            u32(shape.length);
            for (int d = shape.length - 1; d >= 0; d--) u64(shape[d]); // GGUF lists dimensions fastest first
            u32(tensor.type().ggmlId());
            u64(offset);
            offset = padded(offset + tensor.bytes());
        }
        pad();
        skipEmptyTensors();
    }

    private void value(String key, GgufValueType type, Object value) {
        switch (type) {
            case UINT8, INT8 -> one(key, type, (Long) value, 1);
            case UINT16, INT16 -> one(key, type, (Long) value, 2);
            case UINT32, INT32 -> one(key, type, (Long) value, 4);
            case UINT64, INT64 -> u64((Long) value);
            case FLOAT32 -> room(4).putFloat((float) (double) (Double) value);
            case FLOAT64 -> room(8).putDouble((Double) value);
            case BOOL -> room(1).put((byte) ((Boolean) value ? 1 : 0));
            case STRING -> string((String) value);
            case ARRAY -> array(key, (GgufArray) value);
        }
    }

    private void array(String key, GgufArray array) {
        GgufValueType type = array.elementType();
        u32(type.id());
        u64(array.length());
        for (int i = 0; i < array.length(); i++) value(key, type, array.element(i));
    }

    /** An integer of {@code bytes} bytes, checked to fit its type: a writer that truncated would corrupt silently. */
    private void one(String key, GgufValueType type, long value, int bytes) {
        boolean signed = type == GgufValueType.INT8 || type == GgufValueType.INT16 || type == GgufValueType.INT32;
        long min = signed ? -(1L << (bytes * 8 - 1)) : 0;
        long max = signed ? (1L << (bytes * 8 - 1)) - 1 : (1L << (bytes * 8)) - 1;
        if (value < min || value > max) {
            throw new IllegalArgumentException(key + ": " + value + " does not fit " + type);
        }
        ByteBuffer room = room(bytes);
        switch (bytes) {
            case 1 -> room.put((byte) value);
            case 2 -> room.putShort((short) value);
            default -> room.putInt((int) value);
        }
    }

    private void string(String value) {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        u64(utf8.length);
        put(utf8);
    }

    private void u32(long value) {
        room(4).putInt((int) value);
    }

    private void u64(long value) {
        room(8).putLong(value);
    }

    private void put(byte[] bytes) {
        raw(MemorySegment.ofArray(bytes));
    }

    /** The buffer, with at least {@code bytes} free (at most 8 are ever asked for). */
    private ByteBuffer room(int bytes) {
        if (buffer.remaining() < bytes) flush();
        position += bytes;
        return buffer;
    }

    /** Zeros up to the next multiple of the alignment. */
    private void pad() {
        long zeros = padded(position) - position;
        for (long i = 0; i < zeros; i++) room(1).put((byte) 0);
    }

    private long padded(long offset) {
        return Math.ceilDiv(offset, alignment) * (long) alignment;
    }

    /**
     * Writes the next {@code data.byteSize()} bytes of tensor data: the rest of the current tensor's, or part of it.
     * A piece may not run past the current tensor's end; pieces of the next tensor follow in further calls.
     */
    public void write(MemorySegment data) {
        checkOpen();
        long left = current < tensors.size() ? tensors.get(current).bytes() - currentDone : 0;
        if (data.byteSize() > left) {
            throw new IllegalStateException(current < tensors.size()
                    ? tensors.get(current).name() + ": " + data.byteSize() + " bytes written where " + left + " remain"
                    : "every tensor's data is written; " + data.byteSize() + " bytes more");
        }
        raw(data);
        currentDone += data.byteSize();
        if (current < tensors.size() && currentDone == tensors.get(current).bytes()) {
            current++;
            currentDone = 0;
            pad();
            skipEmptyTensors();
        }
    }

    /** Moves past tensors with no bytes (a dimension of 0): they take no data and no padding. */
    private void skipEmptyTensors() {
        while (current < tensors.size() && tensors.get(current).bytes() == 0) current++;
    }

    private void raw(MemorySegment data) {
        long size = data.byteSize();
        position += size;
        if (size <= buffer.remaining()) {
            MemorySegment.ofArray(buffer.array()).asSlice(buffer.position(), size).copyFrom(data);
            buffer.position(buffer.position() + (int) size);
            return;
        }
        flush();
        try {
            ByteBuffer bytes = data.asByteBuffer();
            while (bytes.hasRemaining()) channel.write(bytes);
        } catch (IOException e) {
            throw writeFailed(e);
        }
    }

    private void flush() {
        buffer.flip();
        try {
            while (buffer.hasRemaining()) channel.write(buffer);
        } catch (IOException e) {
            throw writeFailed(e);
        } finally {
            buffer.clear();
        }
    }

    /**
     * Completes the file: every tensor's data must have been written. Forces it to disk and renames it to the
     * target, replacing any file there.
     */
    public void finish() {
        checkOpen();
        if (current < tensors.size()) {
            TensorInfo tensor = tensors.get(current);
            throw new IllegalStateException("tensor " + tensor.name() + " has " + currentDone + " of its "
                    + tensor.bytes() + " bytes" + (tensors.size() - current > 1
                    ? " (and " + (tensors.size() - current - 1) + " more tensors have none)" : ""));
        }
        flush();
        try {
            channel.force(false);
            channel.close();
            try {
                Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new FsException(target + ": cannot complete the file: " + reason(e), e);
        } finally {
            closed = true;
            deleteQuietly(partial); // gone after the move; left only by a failure
        }
        finished = true;
    }

    private void checkOpen() {
        if (closed) throw new IllegalStateException("the writer of " + target + " is closed");
    }

    /** Abandons an unfinished file (deleting it); after {@link #finish()} it does nothing. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        try {
            channel.close();
        } catch (IOException e) {
            // deleted below: nothing of it is kept
        }
        if (!finished) deleteQuietly(partial);
    }

    private FsException writeFailed(IOException e) {
        return new FsException(target + ": cannot write: " + reason(e), e);
    }

    private static String reason(IOException e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    private static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // a leftover temporary file is named .NAME.….partial: harmless, and nothing better can be done here
        }
    }
}
