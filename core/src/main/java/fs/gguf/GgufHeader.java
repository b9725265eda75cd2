package fs.gguf;

import fs.FsException;
import fs.Quoted;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The header of a GGUF file (magic, version, metadata, tensor infos), validated against the file's size so that every
 * tensor can be sliced out of the mapping without further checks. Nothing is trusted before it is checked: every
 * count and length is bounded by the bytes left in the file before anything is allocated for it, every offset and
 * size is computed without overflow and must lie inside the data section, and tensors may not overlap. Each problem
 * is one FsException naming the file and the key or tensor.
 *
 * <pre>
 *   "GGUF" | version u32 | tensor_count u64 | kv_count u64
 *   kv_count × ( key string | value_type u32 | value )        string = length u64, UTF-8 bytes
 *   tensor_count × ( name string | n_dims u32 | n_dims × dim u64 (fastest first) | ggml_type u32 | offset u64 )
 *   padding to general.alignment (default 32) | data section: each tensor at its offset, itself aligned
 * </pre>
 */
record GgufHeader(int version, GgufMetadata metadata, int alignment, long dataStart, List<Entry> entries) {
    static final String ALIGNMENT_KEY = "general.alignment";
    static final int DEFAULT_ALIGNMENT = 32;
    static final int MAX_DIMS = 4;
    /** Deep enough for any real file; a bound keeps a hostile chain of arrays from exhausting the stack. */
    static final int MAX_ARRAY_DEPTH = 16;
    /** A tensor info's fewest bytes: name length 8, n_dims 4, one dimension 8, type 4, offset 8. */
    private static final int MIN_TENSOR_INFO_BYTES = 32;
    /** A key-value pair's fewest bytes: key length 8, value type 4, a one-byte value. */
    private static final int MIN_KV_BYTES = 13;

    /** One tensor info; {@code shape} is slowest first, {@code offset} relative to the data section. */
    record Entry(String name, DType type, long[] shape, long offset, long bytes) {}

    GgufHeader {
        entries = List.copyOf(entries);
    }

    /** Parses and checks the header of {@code file} (the whole mapped file); {@code name} names it in errors. */
    static GgufHeader parse(MemorySegment file, String name) {
        return new Parser(file, name).header();
    }

    private static final class Parser {
        private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

        private final CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        private final MemorySegment file;
        private final String name;
        private final long size;
        private long position;
        /** Where {@link #string} copies a string's bytes: grown to the longest string, not allocated per string. */
        private byte[] stringBytes = new byte[256];

        Parser(MemorySegment file, String name) {
            this.file = file;
            this.name = name;
            this.size = file.byteSize();
        }

        GgufHeader header() {
            if (size < 4 || file.get(U32, 0) != 0x46554747) { // "GGUF" read little-endian
                throw new FsException(name + ": not a GGUF file (it does not start with the bytes 'GGUF')");
            }
            position = 4;
            int version = version();
            long tensorCount = count(u64("the tensor count"), MIN_TENSOR_INFO_BYTES, "tensor count");
            long kvCount = count(u64("the metadata count"), MIN_KV_BYTES, "metadata count");
            GgufMetadata metadata = metadata(kvCount);
            int alignment = alignment(metadata);
            List<Entry> entries = tensorInfos(tensorCount, alignment);
            long dataStart = Math.ceilDiv(position, alignment) * (long) alignment;
            checkData(entries, dataStart);
            return new GgufHeader(version, metadata, alignment, dataStart, entries);
        }

        private int version() {
            long version = u32("the version");
            if (version == 2 || version == 3) return (int) version;
            String hint = Integer.reverseBytes((int) version) == 2 || Integer.reverseBytes((int) version) == 3
                    ? " (a big-endian file? fs reads little-endian GGUF)" : "";
            throw new FsException(name + ": GGUF version " + version + " is not supported (fs reads versions 2 and 3)"
                    + hint);
        }

        /** A claimed count of items of at least {@code minBytes} each, checked against the bytes left. */
        private long count(long count, int minBytes, String what) {
            if (count < 0 || count > remaining() / minBytes) {
                throw new FsException(name + ": " + what + " " + Long.toUnsignedString(count)
                        + " is more than the file could hold (" + remaining() + " bytes are left; corrupt file?)");
            }
            return count;
        }

        private GgufMetadata metadata(long count) {
            Map<String, GgufValue> values = new LinkedHashMap<>();
            for (long i = 0; i < count; i++) {
                String key = string("the key of metadata entry " + i);
                String where = "key " + Quoted.quote(key);
                if (values.containsKey(key)) throw new FsException(name + ": " + where + " appears twice");
                GgufValueType type = valueType(u32(where + ": the value type"), where + ": value type");
                values.put(key, new GgufValue(type, value(type, where, 0)));
            }
            return new GgufMetadata(name, values);
        }

        private int alignment(GgufMetadata metadata) {
            if (!metadata.has(ALIGNMENT_KEY)) return DEFAULT_ALIGNMENT;
            GgufValue value = metadata.get(ALIGNMENT_KEY).orElseThrow();
            long alignment = value.type().isInteger() ? (Long) value.value() : 0;
            if (alignment <= 0 || alignment > 1 << 30 || Long.bitCount(alignment) != 1) {
                throw metadata.error(ALIGNMENT_KEY, "must be a power of two up to 2^30, found " + value.describe());
            }
            return (int) alignment;
        }

        private List<Entry> tensorInfos(long count, int alignment) {
            List<Entry> entries = new ArrayList<>();
            Set<String> names = new HashSet<>();
            for (long i = 0; i < count; i++) {
                String tensor = string("the name of tensor " + i);
                String where = "tensor " + Quoted.quote(tensor);
                if (!names.add(tensor)) throw new FsException(name + ": " + where + " appears twice");
                long dims = u32(where + ": the dimension count");
                if (dims < 1 || dims > MAX_DIMS) {
                    throw error(where, "has " + dims + " dimensions; GGUF tensors have 1 to " + MAX_DIMS);
                }
                long[] shape = new long[(int) dims];
                for (int d = 0; d < dims; d++) shape[shape.length - 1 - d] = u64(where + ": dimension " + d);
                for (long dim : shape) {
                    if (dim < 0) throw error(where, "dimension " + Long.toUnsignedString(dim) + " is too large");
                }
                DType type = ggmlType(u32(where + ": the type"), where);
                long offset = u64(where + ": the data offset");
                long columns = shape[shape.length - 1];
                if (columns % type.blockElements() != 0) {
                    throw error(where, "rows of " + columns + " elements are not whole " + type + " blocks of "
                            + type.blockElements());
                }
                long bytes;
                try {
                    long elements = 1; // checked too: with an empty row, bytes are 0 whatever the other dims
                    for (long dim : shape) elements = Math.multiplyExact(elements, dim);
                    bytes = type.rowBytes(columns);
                    for (int d = 0; d < shape.length - 1; d++) bytes = Math.multiplyExact(bytes, shape[d]);
                } catch (ArithmeticException e) {
                    throw error(where, "shape " + Arrays.toString(shape) + " is too large to address");
                }
                if (offset % alignment != 0) { // also catches offsets past 2^63 unless the alignment is 1
                    throw error(where, "data offset " + Long.toUnsignedString(offset)
                            + " is not a multiple of the alignment " + alignment);
                }
                entries.add(new Entry(tensor, type, shape, offset, bytes));
            }
            return entries;
        }

        private DType ggmlType(long id, String where) {
            return DType.fromGgmlId(id).orElseThrow(() -> {
                String known = DType.ggmlTypes().toString();
                String typeName = DType.ggmlNameOf(id);
                return typeName.startsWith("unknown")
                        ? error(where, "has an unknown ggml type " + id + " (fs reads " + known + ")")
                        : error(where, "is stored as " + typeName + ", which fs does not read (it reads " + known + ")");
            });
        }

        private void checkData(List<Entry> entries, long dataStart) {
            long dataSize = Math.max(0, size - dataStart);
            for (Entry entry : entries) {
                if (entry.offset() < 0 || entry.offset() > dataSize || entry.bytes() > dataSize - entry.offset()) {
                    throw error("tensor " + Quoted.quote(entry.name()), "data at offset "
                            + Long.toUnsignedString(entry.offset()) + " (" + entry.bytes()
                            + " bytes) runs past the end of the file (the data section holds " + dataSize
                            + " bytes from file offset " + dataStart + ")");
                }
            }
            List<Entry> byOffset = new ArrayList<>(entries);
            byOffset.sort(Comparator.comparingLong(Entry::offset).thenComparingLong(Entry::bytes));
            for (int i = 1; i < byOffset.size(); i++) {
                Entry previous = byOffset.get(i - 1);
                Entry entry = byOffset.get(i);
                if (entry.offset() < previous.offset() + previous.bytes()) {
                    throw error("tensor " + Quoted.quote(entry.name()), "data " + range(entry) + " overlaps tensor "
                            + Quoted.quote(previous.name()) + " " + range(previous));
                }
            }
        }

        private static String range(Entry entry) {
            return "[" + entry.offset() + ", " + (entry.offset() + entry.bytes()) + ")";
        }

        private Object value(GgufValueType type, String where, int depth) {
            return switch (type) {
                case UINT8 -> Byte.toUnsignedLong(file.get(ValueLayout.JAVA_BYTE, advance(1, where)));
                case INT8 -> (long) file.get(ValueLayout.JAVA_BYTE, advance(1, where));
                case UINT16 -> Short.toUnsignedLong(file.get(U16, advance(2, where)));
                case INT16 -> (long) file.get(U16, advance(2, where));
                case UINT32 -> Integer.toUnsignedLong(file.get(U32, advance(4, where)));
                case INT32 -> (long) file.get(U32, advance(4, where));
                case UINT64, INT64 -> file.get(U64, advance(8, where));
                case FLOAT32 -> (double) file.get(F32, advance(4, where));
                case FLOAT64 -> file.get(F64, advance(8, where));
                case BOOL -> bool(where);
                case STRING -> string(where);
                case ARRAY -> array(where, depth);
            };
        }

        private boolean bool(String where) {
            byte value = file.get(ValueLayout.JAVA_BYTE, advance(1, where));
            if (value != 0 && value != 1) throw error(where, "a boolean must be 0 or 1, found " + value);
            return value == 1;
        }

        private GgufArray array(String where, int depth) {
            if (depth >= MAX_ARRAY_DEPTH) throw error(where, "arrays are nested more than " + MAX_ARRAY_DEPTH + " deep");
            GgufValueType elementType = valueType(u32(where + ": the array's element type"), where + ": element type");
            long count = u64(where + ": the array's length");
            if (count < 0 || count > remaining() / elementType.minBytes() || count > Integer.MAX_VALUE - 8) {
                throw error(where, "an array of " + Long.toUnsignedString(count) + " " + elementType
                        + " values cannot fit in the " + remaining() + " bytes left in the file");
            }
            int n = (int) count;
            Object elements = switch (elementType) {
                case BOOL -> {
                    boolean[] values = new boolean[n];
                    for (int i = 0; i < n; i++) values[i] = bool(where);
                    yield values;
                }
                case STRING -> strings(where, n);
                case ARRAY -> {
                    GgufArray[] values = new GgufArray[n];
                    for (int i = 0; i < n; i++) values[i] = array(where + ": element " + i, depth + 1);
                    yield values;
                }
                case FLOAT32, FLOAT64 -> {
                    double[] values = new double[n];
                    for (int i = 0; i < n; i++) values[i] = (Double) value(elementType, where, depth);
                    yield values;
                }
                default -> {
                    long[] values = new long[n];
                    for (int i = 0; i < n; i++) values[i] = (Long) value(elementType, where, depth);
                    yield values;
                }
            };
            return new GgufArray(elementType, elements);
        }

        private GgufValueType valueType(long id, String what) {
            return GgufValueType.byId(id).orElseThrow(() -> new FsException(name + ": " + what + " "
                    + Long.toUnsignedString(id) + " is not a GGUF value type (0 to 12)"));
        }

        private String string(String where) {
            int n = stringLength(where, -1);
            if (stringBytes.length < n) stringBytes = new byte[Math.max(n, 2 * stringBytes.length)];
            MemorySegment.copy(file, ValueLayout.JAVA_BYTE, advance(n, where), stringBytes, 0, n);
            return decode(stringBytes, 0, n, where, -1);
        }

        /**
         * A string's length, checked against the bytes left; the string's bytes are next. {@code element} (when not
         * -1) is its index in an array, named only if the string is bad.
         */
        private int stringLength(String where, long element) {
            long length = file.get(U64, advance(8, where));
            if (length < 0 || length > remaining() || length > Integer.MAX_VALUE - 8) {
                throw new FsException(name + ": " + element(where, element) + ": a string of "
                        + Long.toUnsignedString(length) + " bytes runs past the end of the file (" + remaining()
                        + " bytes are left)");
            }
            return (int) length;
        }

        /**
         * An array's {@code n} strings, checked and copied but not decoded (see {@link GgufStrings}): a qwen3 file
         * holds 300,000 of them, and a run that has its tokenizer cached reads a few.
         */
        private GgufStrings strings(String where, int n) {
            long first = position;
            int[] starts = new int[n + 1];
            for (int i = 0; i < n; i++) {
                int length = stringLength(where, i);
                advance(length, where);
                if (length > Integer.MAX_VALUE - 8 - starts[i]) {
                    throw error(where, "its strings hold more than 2 GiB, which fs does not read");
                }
                starts[i + 1] = starts[i] + length;
            }
            byte[] bytes = new byte[starts[n]];
            long at = first;
            for (int i = 0; i < n; i++) {
                int length = starts[i + 1] - starts[i];
                MemorySegment.copy(file, ValueLayout.JAVA_BYTE, at + 8, bytes, starts[i], length);
                at += 8 + length;
            }
            checkUtf8(bytes, starts, where);
            return new GgufStrings(bytes, starts);
        }

        /**
         * Fails naming the first string of {@code bytes} that is not valid UTF-8. Strings end to end that decode as
         * valid UTF-8, none of them starting on a continuation byte (10xxxxxx, inside a character), are each valid:
         * so one decoding checks them all, and only when it is in doubt is each string decoded by itself.
         */
        private void checkUtf8(byte[] bytes, int[] starts, String where) {
            boolean startsOfCharacters = true;
            for (int i = 1; i < starts.length - 1 && startsOfCharacters; i++) {
                startsOfCharacters = starts[i] == bytes.length || (bytes[starts[i]] & 0xC0) != 0x80;
            }
            if (startsOfCharacters && new String(bytes, StandardCharsets.UTF_8).indexOf('\uFFFD') < 0) return;
            for (int i = 0; i < starts.length - 1; i++) decode(bytes, starts[i], starts[i + 1] - starts[i], where, i);
        }

        /** {@code n} bytes from {@code from} as a string, failing if they are not valid UTF-8. */
        private String decode(byte[] bytes, int from, int n, String where, long element) {
            // String's own UTF-8 decoding is the fast one, but it replaces a malformed sequence with U+FFFD rather
            // than failing; a result without U+FFFD therefore came from valid UTF-8, and only one with it needs the
            // strict decoder.
            String decoded = new String(bytes, from, n, StandardCharsets.UTF_8);
            if (decoded.indexOf('\uFFFD') < 0) return decoded;
            try {
                return utf8.reset().decode(ByteBuffer.wrap(bytes, from, n)).toString();
            } catch (CharacterCodingException e) {
                throw new FsException(name + ": " + element(where, element) + " is not valid UTF-8");
            }
        }

        private static String element(String where, long element) {
            return element < 0 ? where : where + ": element " + element;
        }

        private long u32(String what) {
            return Integer.toUnsignedLong(file.get(U32, advance(4, what)));
        }

        private long u64(String what) {
            return file.get(U64, advance(8, what));
        }

        /** Claims the next {@code bytes} bytes and returns where they start. */
        private long advance(long bytes, String what) {
            if (bytes > remaining()) {
                throw new FsException(name + ": " + what + " runs past the end of the file (" + bytes
                        + " bytes at offset " + position + " of " + size + ")");
            }
            long start = position;
            position += bytes;
            return start;
        }

        private long remaining() {
            return size - position;
        }

        private FsException error(String where, String problem) {
            return new FsException(name + ": " + where + ": " + problem);
        }
    }
}
