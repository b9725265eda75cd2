package fs.gguf;

import fs.FsException;
import fs.tensor.FileStamp;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
 * One GGUF file (versions 2 and 3), mapped into memory once: its tensors are slices of the mapping, so opening reads
 * only the header and the weights are paged in when first touched. The mapping lives until {@link #close()}; tensors
 * must not be used after that.
 */
public final class GgufFile implements AutoCloseable {
    private final Path path;
    private final Arena arena;
    private final GgufHeader header;
    private final List<GgufTensor> tensors;
    private final Map<String, GgufTensor> tensorsByName;
    /** The file as it was when mapped: a shared mapping shows whatever is written to the file later. */
    private final FileStamp stamp;

    private GgufFile(Path path, Arena arena, GgufHeader header, List<GgufTensor> tensors, FileStamp stamp) {
        this.path = path;
        this.arena = arena;
        this.stamp = stamp;
        this.header = header;
        this.tensors = List.copyOf(tensors);
        Map<String, GgufTensor> byName = new LinkedHashMap<>();
        for (GgufTensor tensor : tensors) byName.put(tensor.name(), tensor);
        this.tensorsByName = Collections.unmodifiableMap(byName);
    }

    /** Validates the header of {@code path} and maps the file; every problem is one FsException naming the file. */
    public static GgufFile open(Path path) {
        if (Files.isDirectory(path)) throw new FsException(path + ": is a directory, expected a .gguf file");
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            FileStamp stamp = FileStamp.of(path);
            Arena arena = Arena.ofShared();
            try {
                MemorySegment mapping = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena);
                GgufHeader header = GgufHeader.parse(mapping, path.toString());
                List<GgufTensor> tensors = new ArrayList<>(header.entries().size());
                for (GgufHeader.Entry entry : header.entries()) {
                    MemorySegment data = mapping.asSlice(header.dataStart() + entry.offset(), entry.bytes());
                    tensors.add(new GgufTensor(entry.name(), entry.type(), entry.shape(), entry.offset(), data));
                }
                return new GgufFile(path, arena, header, tensors, stamp);
            } catch (Throwable e) {
                arena.close();
                throw e;
            }
        } catch (IOException e) {
            throw FsException.cannotRead(path, e);
        }
    }

    public Path path() {
        return path;
    }

    /** 2 or 3. */
    public int version() {
        return header.version();
    }

    public GgufMetadata metadata() {
        return header.metadata();
    }

    /** general.alignment, or GGUF's default of 32: every tensor's offset is a multiple of it. */
    public int alignment() {
        return header.alignment();
    }

    /** File offset of the data section: the end of the tensor infos, rounded up to the alignment. */
    public long dataStart() {
        return header.dataStart();
    }

    /** Every tensor, in the order the file lists them. */
    public List<GgufTensor> tensors() {
        return tensors;
    }

    public Optional<GgufTensor> tensor(String name) {
        return Optional.ofNullable(tensorsByName.get(name));
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
