package fs.tokenizer;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/** The layout of a {@link TokenizerCache} file as tests need it: where its tables start, and re-signing edited ones. */
final class CacheFileBytes {
    private CacheFileBytes() {}

    /** Where the tables start: after the magic, format, source (path, size, time, file key), body length and CRC. */
    static int bodyStart(byte[] cacheFile) {
        ByteBuffer in = ByteBuffer.wrap(cacheFile);
        in.position(12);
        int pathChars = in.getInt();
        in.position(in.position() + 2 * pathChars + 16);
        int fileKeyChars = in.getInt();
        return in.position() + 2 * fileKeyChars + 12;
    }

    /** The file's header with {@code tables} after it, and the body length and checksum that make it pass for valid. */
    static byte[] withTables(byte[] cacheFile, byte[] tables) {
        int bodyStart = bodyStart(cacheFile);
        CRC32 crc = new CRC32();
        crc.update(tables);
        return ByteBuffer.allocate(bodyStart + tables.length)
                .put(cacheFile, 0, bodyStart - 12)
                .putLong(tables.length)
                .putInt((int) crc.getValue())
                .put(tables)
                .array();
    }
}
