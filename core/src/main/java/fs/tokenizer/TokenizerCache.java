package fs.tokenizer;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * Parsed tokenizers kept as binary tables in a cache directory: parsing Qwen3's 11 MB of tokenizer.json on a cold JVM
 * takes most of a second, building the tables from a GGUF file's 300,000 token and merge strings a few tenths (the
 * strings' hashing, and the JIT compiling it, on every {@code fs run}), reading the tables back a few tens of
 * milliseconds. The cache never lives beside the model (its directory may be read-only, or a Hugging Face snapshot). A
 * cache file names the file it was made from (tokenizer.json or the GGUF file: real path, size, modification time,
 * file key) and carries a checksum; one that is stale, corrupt or of another format is ignored and rewritten, and a
 * cache directory that cannot be written only costs the speed-up.
 */
final class TokenizerCache {
    /** "fs-token". */
    private static final long MAGIC = 0x66732D746F6B656EL;
    /** Raise whenever the layout here, or the hashing in {@link TokenIds} or {@link MergeTable}, changes. */
    static final int FORMAT = 1;

    /** Where cache files go; null for no cache at all. */
    private final Path dir;

    TokenizerCache(Path dir) {
        this.dir = dir;
    }

    /** $FS_CACHE_DIR, else $XDG_CACHE_HOME/fs, else ~/.cache/fs. */
    static TokenizerCache forUser() {
        String explicit = System.getenv("FS_CACHE_DIR");
        if (explicit != null && !explicit.isEmpty()) return new TokenizerCache(Path.of(explicit));
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isEmpty()) return new TokenizerCache(Path.of(xdg, "fs"));
        String home = System.getProperty("user.home");
        return new TokenizerCache(home == null || home.isEmpty() ? null : Path.of(home, ".cache", "fs"));
    }

    /** The tokenizer of a tokenizer.json, from the cache when it holds this very file, else parsed and cached. */
    TokenizerData read(Path tokenizerJson) {
        return read(tokenizerJson, () -> TokenizerFile.read(tokenizerJson)); // reports a missing or malformed file
    }

    /**
     * The tokenizer made from {@code file} (a tokenizer.json, or the GGUF file whose metadata holds it), from the
     * cache when it holds this very file, else made by {@code parse} (which reports what is wrong with the file) and
     * cached.
     */
    TokenizerData read(Path file, Supplier<TokenizerData> parse) {
        TokenizerData cached = cached(file);
        if (cached != null) return cached;
        TokenizerData data = parse.get();
        Source source = dir == null ? null : Source.of(file);
        if (source != null) write(cacheFile(source), source, data);
        return data;
    }

    /** The cached tables of this very file, or null when there are none (or none usable). */
    TokenizerData cached(Path file) {
        Source source = dir == null ? null : Source.of(file);
        return source == null ? null : readCached(cacheFile(source), source);
    }

    /** The cache file of a tokenizer.json or GGUF file, named after its real path. */
    Path cacheFile(Path file) {
        Source source = Source.of(file);
        return source == null ? null : cacheFile(source);
    }

    private Path cacheFile(Source source) {
        return dir.resolve("tokenizer-" + Long.toHexString(fnv1a(source.path())) + ".bin");
    }

    /** The identity of a tokenizer's file: a cache file made from it is valid while all of this is unchanged. */
    private record Source(String path, long size, long modifiedNanos, String fileKey) {
        static Source of(Path file) {
            try {
                Path real = file.toRealPath();
                BasicFileAttributes attributes = Files.readAttributes(real, BasicFileAttributes.class);
                return new Source(real.toString(), attributes.size(), attributes.lastModifiedTime().to(TimeUnit.NANOSECONDS),
                        String.valueOf(attributes.fileKey()));
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }
    }

    private static TokenizerData readCached(Path cacheFile, Source source) {
        // Read onto the heap rather than mapped: page-faulting a mapping in costs more than one bulk read.
        try (FileChannel channel = FileChannel.open(cacheFile, StandardOpenOption.READ)) {
            long size = channel.size();
            // The tables take a few times the JSON's size; a file far larger is not one this class wrote for it.
            if (size > Integer.MAX_VALUE || size > 32 * source.size() + (1 << 20)) return null;
            ByteBuffer in = ByteBuffer.allocate((int) size);
            while (in.hasRemaining() && channel.read(in) >= 0) {
                // until the buffer is full or the file ends
            }
            in.flip();
            if (in.getLong() != MAGIC || in.getInt() != FORMAT || !source.equals(readSource(in))) return null;
            long bodyLength = in.getLong();
            int checksum = in.getInt();
            if (bodyLength != in.remaining()) return null;
            CRC32 crc = new CRC32();
            crc.update(in.array(), in.position(), in.remaining());
            if ((int) crc.getValue() != checksum) return null;
            return readBody(in);
        } catch (IOException | RuntimeException e) {
            // Missing, truncated, corrupt or from another version: parse the JSON instead, and rewrite the file.
            return null;
        }
    }

    private static Source readSource(ByteBuffer in) {
        return new Source(readString(in), in.getLong(), in.getLong(), readString(in));
    }

    private static TokenizerData readBody(ByteBuffer in) {
        boolean ignoreMerges = in.get() != 0;
        int[] byteIds = BinaryArrays.readInts(in);
        if (byteIds.length != 256) throw new IllegalArgumentException("bad byte ids");
        List<Normalizer.Form> forms = new ArrayList<>();
        for (int i = in.getInt(); i > 0; i--) forms.add(Normalizer.Form.valueOf(readString(in)));
        List<Pattern> patterns = new ArrayList<>();
        for (int i = in.getInt(); i > 0; i--) {
            String regex = readString(in);
            // Compiling costs up to quadratic time in the length: only patterns tokenizer.json may have are used.
            if (regex.length() > PreTokenizer.MAX_PATTERN_CHARS + 16) throw new IllegalArgumentException("pattern too long");
            patterns.add(Pattern.compile(regex, in.getInt()));
        }
        List<AddedToken> added = new ArrayList<>();
        for (int i = in.getInt(); i > 0; i--) {
            int id = in.getInt();
            added.add(new AddedToken(id, readString(in), in.get() != 0, in.get() != 0));
        }
        TokenIds vocab = TokenIds.readFrom(in);
        MergeTable merges = MergeTable.readFrom(in);
        if (in.hasRemaining()) throw new IllegalArgumentException("trailing bytes");
        // The checksum proves the bytes are as written, not that this build hashes as the one that wrote them.
        for (int b = 0; b < 256; b++) {
            if (byteIds[b] >= 0 && vocab.id(String.valueOf(ByteLevel.charOf(b))) != byteIds[b]) {
                throw new IllegalArgumentException("vocabulary hashed differently");
            }
        }
        if (!merges.findsMerges(256)) throw new IllegalArgumentException("merges hashed differently");
        for (int id : byteIds) if (id != -1 && !vocab.hasToken(id)) throw new IllegalArgumentException("bad byte id");
        if (!merges.usesOnlyTokensOf(vocab)) throw new IllegalArgumentException("merge of unknown tokens");
        TokenizerData data = new TokenizerData(vocab, merges, byteIds, ignoreMerges, added, forms, patterns);
        for (AddedToken token : added) {
            if (token.id() < 0 || token.id() >= data.idBound()) throw new IllegalArgumentException("bad added token id");
        }
        if (data.idLimit() > data.idBound()) throw new IllegalArgumentException("ids beyond the vocabulary");
        return data;
    }

    private static void write(Path cacheFile, Source source, TokenizerData data) {
        Path temporary = null;
        try {
            ByteArrayOutputStream body = new ByteArrayOutputStream(1 << 24);
            writeBody(new DataOutputStream(body), data);
            CRC32 crc = new CRC32();
            crc.update(body.toByteArray());
            Files.createDirectories(dir(cacheFile));
            // Written aside and renamed, so that a concurrent run sees the old file or the new one, never half of one.
            temporary = Files.createTempFile(dir(cacheFile), cacheFile.getFileName().toString(), ".tmp");
            try (OutputStream file = Files.newOutputStream(temporary);
                    DataOutputStream out = new DataOutputStream(new BufferedOutputStream(file, 1 << 16))) {
                out.writeLong(MAGIC);
                out.writeInt(FORMAT);
                writeString(out, source.path());
                out.writeLong(source.size());
                out.writeLong(source.modifiedNanos());
                writeString(out, source.fileKey());
                out.writeLong(body.size());
                out.writeInt((int) crc.getValue());
                body.writeTo(out);
            }
            try {
                Files.move(temporary, cacheFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temporary, cacheFile, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | RuntimeException e) {
            // A cache that cannot be written (read-only home, full disk) only costs the speed-up.
            if (temporary != null) {
                try {
                    Files.deleteIfExists(temporary);
                } catch (IOException ignored) {
                    // nothing more to do: the next write uses another temporary name
                }
            }
        }
    }

    private static Path dir(Path cacheFile) {
        return cacheFile.toAbsolutePath().getParent();
    }

    private static void writeBody(DataOutputStream out, TokenizerData data) throws IOException {
        out.writeByte(data.ignoreMerges() ? 1 : 0);
        BinaryArrays.writeInts(out, data.byteIds(), data.byteIds().length);
        out.writeInt(data.normalizerForms().size());
        for (Normalizer.Form form : data.normalizerForms()) writeString(out, form.name());
        out.writeInt(data.splitPatterns().size());
        for (Pattern pattern : data.splitPatterns()) {
            writeString(out, pattern.pattern());
            out.writeInt(pattern.flags());
        }
        out.writeInt(data.added().size());
        for (AddedToken token : data.added()) {
            out.writeInt(token.id());
            writeString(out, token.content());
            out.writeByte(token.special() ? 1 : 0);
            out.writeByte(token.normalized() ? 1 : 0);
        }
        data.vocab().writeTo(out);
        data.merges().writeTo(out);
    }

    private static void writeString(DataOutputStream out, String text) throws IOException {
        BinaryArrays.writeChars(out, text.toCharArray(), text.length());
    }

    private static String readString(ByteBuffer in) {
        return new String(BinaryArrays.readChars(in));
    }

    /** FNV-1a of a path, to name its cache file; a collision only makes two paths take turns in one file. */
    private static long fnv1a(String text) {
        long hash = 0xcbf29ce484222325L;
        for (int i = 0; i < text.length(); i++) {
            hash ^= text.charAt(i);
            hash *= 0x100000001b3L;
        }
        return hash;
    }
}
