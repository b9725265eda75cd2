package fs.safetensors;

import fs.FsException;
import fs.tensor.FileStamp;
import fs.tensor.Tensor;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One safetensors file, mapped into memory once: its tensors are slices of the mapping, so opening reads only the
 * header and the weights are paged in when first touched. The mapping lives until {@link #close()}; tensors must not
 * be used after that.
 */
public final class SafetensorsFile implements AutoCloseable {
    /** Real headers are a few hundred KB; a larger claimed size means a corrupt or hostile file. */
    static final long MAX_HEADER_BYTES = 100L * 1000 * 1000;

    private final Path path;
    private final Arena arena;
    private final List<Tensor> tensors;
    private final Map<String, Tensor> tensorsByName;
    private final Map<String, String> metadata;
    /** The file as it was when mapped: a shared mapping shows whatever is written to the file later. */
    private final FileStamp stamp;

    private SafetensorsFile(
            Path path, Arena arena, List<Tensor> tensors, Map<String, String> metadata, FileStamp stamp) {
        this.path = path;
        this.arena = arena;
        this.stamp = stamp;
        this.tensors = List.copyOf(tensors);
        Map<String, Tensor> byName = new LinkedHashMap<>();
        for (Tensor tensor : tensors) byName.put(tensor.name(), tensor);
        this.tensorsByName = Collections.unmodifiableMap(byName);
        this.metadata = metadata;
    }

    /** Validates the header of {@code path} and maps the file; every problem is one FsException naming the file. */
    public static SafetensorsFile open(Path path) {
        if (Files.isDirectory(path)) throw new FsException(path + ": is a directory, expected a .safetensors file");
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            FileStamp stamp = FileStamp.of(path);
            long fileSize = channel.size();
            byte[] sizeField = new byte[(int) Math.min(Long.BYTES, fileSize)];
            readFully(channel, ByteBuffer.wrap(sizeField), 0);
            long headerSize = headerSize(sizeField, fileSize, path.toString());
            long dataStart = Long.BYTES + headerSize;
            byte[] json = new byte[(int) headerSize];
            readFully(channel, ByteBuffer.wrap(json), Long.BYTES);
            SafetensorsHeader header = SafetensorsHeader.parse(json, fileSize - dataStart, path.toString());

            Arena arena = Arena.ofShared();
            try {
                MemorySegment mapping = channel.map(FileChannel.MapMode.READ_ONLY, 0, fileSize, arena);
                List<Tensor> tensors = new ArrayList<>(header.entries().size());
                for (SafetensorsHeader.Entry entry : header.entries()) {
                    MemorySegment data = mapping.asSlice(dataStart + entry.begin(), entry.end() - entry.begin());
                    tensors.add(new Tensor(entry.name(), entry.dtype(), entry.shape(), data));
                }
                return new SafetensorsFile(path, arena, tensors, header.metadata(), stamp);
            } catch (Throwable e) {
                arena.close();
                throw e;
            }
        } catch (IOException e) {
            throw FsException.cannotRead(path, e);
        }
    }

    /**
     * The length of the JSON header, from the first 8 bytes of a file of {@code fileSize} bytes (fewer only when the
     * file is shorter, which is an error), checked as {@link #open} checks it: within {@value #MAX_HEADER_BYTES}
     * bytes and within the file. {@code file} names it in errors. For readers that fetch a header without the file.
     */
    public static long headerSize(byte[] firstBytes, long fileSize, String file) {
        if (fileSize < Long.BYTES) {
            throw new FsException(file + ": file is " + fileSize
                    + " bytes, too short for a safetensors file (it starts with an 8-byte header size)");
        }
        long headerSize = ByteBuffer.wrap(firstBytes, 0, Long.BYTES).order(ByteOrder.LITTLE_ENDIAN).getLong();
        if (headerSize < 0 || headerSize > MAX_HEADER_BYTES) {
            throw new FsException(file + ": header size " + Long.toUnsignedString(headerSize)
                    + " is beyond the " + MAX_HEADER_BYTES + "-byte limit (corrupt file?)");
        }
        if (Long.BYTES + headerSize > fileSize) {
            throw new FsException(file + ": header size " + headerSize + " is larger than the file ("
                    + fileSize + " bytes)");
        }
        return headerSize;
    }

    /**
     * The tensors the JSON header of a file of {@code fileSize} bytes lists, in data order, checked exactly as
     * {@link #open} checks them, but without their bytes: each tensor's data is an empty segment. They serve what
     * needs only names, dtypes and shapes (a listing, a weights check of shapes and dtypes), never what reads weights.
     */
    public static List<Tensor> headerTensors(byte[] json, long fileSize, String file) {
        SafetensorsHeader header = SafetensorsHeader.parse(json, fileSize - Long.BYTES - json.length, file);
        List<Tensor> tensors = new ArrayList<>(header.entries().size());
        for (SafetensorsHeader.Entry entry : header.entries()) {
            tensors.add(new Tensor(entry.name(), entry.dtype(), entry.shape(), MemorySegment.NULL));
        }
        return List.copyOf(tensors);
    }

    private static void readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        while (buffer.hasRemaining()) {
            int read = channel.read(buffer, position + buffer.position());
            if (read < 0) throw new EOFException("file shrank while reading its header");
        }
    }

    public Path path() {
        return path;
    }

    /** Every tensor, in the order their data appears in the file. */
    public List<Tensor> tensors() {
        return tensors;
    }

    public Optional<Tensor> tensor(String name) {
        return Optional.ofNullable(tensorsByName.get(name));
    }

    /** The header's {@code __metadata__} (e.g. {"format": "pt"}); empty when the file has none. */
    public Map<String, String> metadata() {
        return metadata;
    }

    /** Whether the mapped file has been truncated or written to since it was opened (see {@link FileStamp}). */
    public boolean changedSinceOpen() {
        return stamp.changedOnDisk();
    }

    /** Unmaps the file; the tensors' data becomes inaccessible. Closing twice is harmless. */
    @Override
    public void close() {
        if (arena.scope().isAlive()) arena.close();
    }
}
