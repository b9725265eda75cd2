package fs.tensor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.TimeUnit;

/**
 * What a cheap stat() can tell about a mapped file's contents: its identity, size and modification time when it was
 * mapped. A shared mapping shows whatever is written to the file later, so a file that changed means tensors that
 * read other bytes than its header described, or fault.
 */
public record FileStamp(Path path, Object fileKey, long size, long modifiedNanos) {

    public static FileStamp of(Path path) throws IOException {
        BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
        return new FileStamp(path, attributes.fileKey(), attributes.size(),
                attributes.lastModifiedTime().to(TimeUnit.NANOSECONDS));
    }

    /**
     * Whether the file has been truncated or written to since this stamp (one stat() call). A file replaced by another
     * under the same name (a new inode) leaves the mapping intact and does not count.
     */
    public boolean changedOnDisk() {
        try {
            FileStamp now = of(path);
            if (fileKey != null && !fileKey.equals(now.fileKey)) return false;
            return now.size != size || now.modifiedNanos != modifiedNanos;
        } catch (IOException e) {
            return false; // deleted or renamed: the mapping keeps the old inode's bytes alive
        }
    }
}
