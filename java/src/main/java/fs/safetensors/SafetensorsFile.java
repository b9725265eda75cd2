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
            if (fileSize < Long.BYTES) {
                throw new FsException(path + ": file is " + fileSize
                        + " bytes, too short for a safetensors file (it starts with an 8-byte header size)");
            }
            ByteBuffer sizeField = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            readFully(channel, sizeField, 0);
            long headerSize = sizeField.getLong(0);
            if (headerSize < 0 || headerSize > MAX_HEADER_BYTES) {
                throw new FsException(path + ": header size " + Long.toUnsignedString(headerSize)
                        + " is beyond the " + MAX_HEADER_BYTES + "-byte limit (corrupt file?)");
            }
            long dataStart = Long.BYTES + headerSize;
            if (dataStart > fileSize) {
                throw new FsException(path + ": header size " + headerSize + " is larger than the file ("
                        + fileSize + " bytes)");
            }
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
