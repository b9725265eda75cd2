package fs.backend.cpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import fs.FsException;
import fs.tensor.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * One variant (instruction set) of libfscpu's kernels, as downcall handles: activation rows quantized to 8 bits
 * (Q8_0 blocks for Q8_0 and Q4_0 weights, Q8_K for the K-quants and IQ2_XXS) and matmul slices of weight rows
 * against them with integer dot products; for BF16, F16 and F32 weights, activation rows converted to that format
 * and float dot products (native/cpu/README.md). Every variant gives the same floats, bit for bit.
 *
 * <p>Some formats (Q4_K, Q4_0, Q8_0, Q6_K, Q2_K, Q3_K) also have a repacked layout ({@link RepackedRows}): groups of {@link #GROUP_ROWS}
 * rows interleaved block by block, so that one activation value meets the group's rows in one instruction, and a
 * matmul on it that gives the same floats, bit for bit, as the one on the rows as stored. Which formats have one the
 * library says ({@code fs_repacked_bytes}); a library without it has none.
 *
 * <p>The downcalls are critical (no thread-state transition; heap segments allowed): each is bounded, a slice of
 * weight rows against a few activation rows, so a safepoint waits at most that long. Every call is checked here
 * against the segments' sizes, so the native code never reads or writes outside them.
 */
@SuppressWarnings("restricted") // downcalls into libfscpu
final class NativeKernels {
    /**
     * The variants libfscpu can have, best first: x86's, aarch64's (a library has its own architecture's and scalar,
     * and says it runs no other), the portable one.
     */
    static final List<String> ISAS = List.of("avx512", "avxvnni", "avx2", "neon", "scalar");

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option CRITICAL = Linker.Option.critical(true);
    private static final FunctionDescriptor QUANTIZE = FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_LONG);
    private static final FunctionDescriptor MATMUL = FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT,
            ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG);
    private static final FunctionDescriptor REPACKED_BYTES = FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG,
            JAVA_INT);
    private static final FunctionDescriptor REPACK = FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT,
            JAVA_INT, ADDRESS);
    private static final FunctionDescriptor REPACKED_MATMUL = FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_INT,
            ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG);

    /** Rows per group of the repacked layouts: a repacked matmul's slices start and end on whole groups. */
    static final int GROUP_ROWS = 16;

    /**
     * How a weight format's activations are quantized: blocks of {@code elements} values in {@code bytes}, as many
     * values as a weight block holds, so that the kernels take the dot products of one block with one block.
     */
    enum Activations {
        /** A float scale, 32 int8 and each run of 4's multiple of the scale (as 16 int16, each twice). */
        Q8_0(32, 68),
        /**
         * A float scale, 256 int8, the 16 int16 sums of their runs of 16, and each run of 32's multiple of the scale
         * (as 16 int16, one per run of 16, and as 8 int16).
         */
        Q8_K(256, 340),
        /** BF16 weights': bf16, rounded to nearest even as ggml rounds them (vdpbf16ps multiplies them). */
        BF16(1, 2),
        /** F16 weights': IEEE halves, as llama.cpp's. */
        F16(1, 2),
        /** F32 weights': the floats themselves. */
        F32(1, 4);

        final int elements;
        final int bytes;

        Activations(int elements, int bytes) {
            this.elements = elements;
            this.bytes = bytes;
        }

        /** libfscpu's function that writes this format: fs_quantize_q8_0, ..., fs_convert_bf16, .... */
        String function() {
            return (elements == 1 ? "fs_convert_" : "fs_quantize_") + name().toLowerCase(Locale.ROOT);
        }

        /** Bytes of one quantized row of k values. */
        long rowBytes(int k) {
            return (long) k / elements * bytes;
        }

        /**
         * The activation blocks of {@code weights}'s size: Q8_0 for Q8_0 and Q4_0, Q8_K for the 256-value blocks;
         * float weights' activations in their own format.
         */
        static Activations of(DType weights) {
            if (weights == DType.BF16 || weights == DType.F16 || weights == DType.F32) return valueOf(weights.name());
            for (Activations a : values()) {
                if (a.elements == weights.blockElements()) return a;
            }
            throw new IllegalArgumentException("no activation blocks of " + weights.blockElements() + " values, for "
                    + weights);
        }
    }

    private final String isa;
    private final Map<Activations, MethodHandle> quantize = new EnumMap<>(Activations.class);
    private final Map<DType, MethodHandle> matmul = new EnumMap<>(DType.class);
    /** fs_repacked_bytes, or null when the library has no repacked layouts. */
    private final MethodHandle repackedBytes;
    /** fs_repack_F and this variant's fs_matmul_F_x16, for the formats that have a repacked layout. */
    private final Map<DType, MethodHandle> repack = new EnumMap<>(DType.class);
    private final Map<DType, MethodHandle> repackedMatmul = new EnumMap<>(DType.class);
    private final NativeFloatOps floatOps;

    private NativeKernels(SymbolLookup library, String isa) {
        this.isa = isa;
        for (Activations a : Activations.values()) {
            quantize.put(a, handle(library, a.function() + "_" + isa, QUANTIZE));
        }
        for (DType weights : DType.values()) {
            if (covers(weights)) {
                matmul.put(weights, handle(library, "fs_matmul_" + weights.kernelName() + "_" + isa, MATMUL));
            }
        }
        Optional<MemorySegment> bytes = library.find("fs_repacked_bytes");
        repackedBytes = bytes.map(symbol -> LINKER.downcallHandle(symbol, REPACKED_BYTES)).orElse(null);
        for (DType weights : matmul.keySet()) {
            if (repackedBytes(weights, GROUP_ROWS, weights.blockElements()) > 0) {
                repack.put(weights, handle(library, "fs_repack_" + weights.kernelName(), REPACK));
                repackedMatmul.put(weights,
                        handle(library, "fs_matmul_" + weights.kernelName() + "_x16_" + isa, REPACKED_MATMUL));
            }
        }
        floatOps = new NativeFloatOps(library, isa);
    }

    private static MethodHandle handle(SymbolLookup library, String name, FunctionDescriptor descriptor) {
        MemorySegment symbol = library.find(name).orElseThrow(
                () -> new FsException("the native CPU kernels have no " + name + " (a library from another build?)"));
        return LINKER.downcallHandle(symbol, descriptor, CRITICAL);
    }

    /**
     * Variant {@code isa} of the library's kernels, which this CPU must run ({@link #runs}: an instruction it lacks
     * would end the JVM); an error when the library lacks one of the functions.
     */
    static NativeKernels bind(SymbolLookup library, String isa) {
        if (!runs(library, isa)) throw new IllegalArgumentException("this CPU cannot run the " + isa + " kernels");
        checkActivationBlocks(library);
        checkWeightBlocks(library);
        return new NativeKernels(library, isa);
    }

    /** The library's activation blocks must be the size fs gives them room for (a library from another build?). */
    private static void checkActivationBlocks(SymbolLookup library) {
        MethodHandle bytes = sizeFunction(library, "fs_activation_bytes");
        for (Activations a : Activations.values()) {
            checkSize(bytes, "fs_activation_bytes", a.name().toLowerCase(Locale.ROOT), a.toString(), a.bytes);
        }
    }

    /** The library's weight blocks must be the size fs reads them at: a row's bytes are counted from it. */
    private static void checkWeightBlocks(SymbolLookup library) {
        MethodHandle bytes = sizeFunction(library, "fs_block_bytes");
        for (DType weights : DType.values()) {
            if (covers(weights)) {
                checkSize(bytes, "fs_block_bytes", weights.kernelName(), weights.toString(), weights.blockBytes());
            }
        }
    }

    /** The library's {@code int name(const char *format)}, which gives a format's block bytes. */
    private static MethodHandle sizeFunction(SymbolLookup library, String name) {
        return LINKER.downcallHandle(library.find(name).orElseThrow(
                () -> new FsException("the native CPU kernels have no " + name + " (a library from another build?)")),
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    private static void checkSize(MethodHandle bytes, String function, String format, String what, int expected) {
        int size;
        try (Arena arena = Arena.ofConfined()) {
            size = (int) bytes.invokeExact(arena.allocateFrom(format));
        } catch (Throwable e) {
            throw new IllegalStateException(function + " failed", e);
        }
        if (size != expected) {
            throw new FsException("the native CPU kernels' " + what + " blocks are " + size + " bytes, fs's "
                    + expected + " (a library from another build?)");
        }
    }

    /** Whether this CPU runs the library's variant {@code isa} (and the library has it). */
    static boolean runs(SymbolLookup library, String isa) {
        MethodHandle runs = LINKER.downcallHandle(library.find("fs_cpu_runs").orElseThrow(
                () -> new FsException("the native CPU kernels have no fs_cpu_runs")),
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
        try (Arena arena = Arena.ofConfined()) {
            return (int) runs.invokeExact(arena.allocateFrom(isa)) != 0;
        } catch (Throwable e) {
            throw new IllegalStateException("fs_cpu_runs failed", e);
        }
    }

    /** The variants this CPU runs, best first. */
    static List<String> runnable(SymbolLookup library) {
        return ISAS.stream().filter(isa -> runs(library, isa)).toList();
    }

    /** The best variant this CPU runs, by the library's CPUID check. */
    static String best(SymbolLookup library) {
        MethodHandle best = LINKER.downcallHandle(library.find("fs_cpu_isa").orElseThrow(
                () -> new FsException("the native CPU kernels have no fs_cpu_isa")), FunctionDescriptor.of(ADDRESS));
        try {
            return ((MemorySegment) best.invokeExact()).reinterpret(64).getString(0);
        } catch (Throwable e) {
            throw new IllegalStateException("fs_cpu_isa failed", e);
        }
    }

    String isa() {
        return isa;
    }

    /** The same variant's float operations. */
    NativeFloatOps floatOps() {
        return floatOps;
    }

    /**
     * Whether {@code weights} has native kernels: every quantized format and the float ones (BF16, F16, F32) have
     * their matmul in libfscpu, found by the format's {@link DType#kernelName() name} (a library without one is
     * refused when bound).
     */
    static boolean covers(DType weights) {
        return weights.isQuantized() || weights == DType.BF16 || weights == DType.F16 || weights == DType.F32;
    }

    /**
     * {@code count} floats of {@code x} (whole blocks) quantized into {@code out} as {@code format}'s blocks, or
     * converted to its values (the float formats).
     */
    void quantize(Activations format, MemorySegment x, MemorySegment out, long count) {
        if (count % format.elements != 0 || x.byteSize() < count * Float.BYTES
                || out.byteSize() < count / format.elements * format.bytes) {
            throw new IllegalArgumentException("cannot quantize " + count + " values of " + x.byteSize()
                    + " bytes into " + out.byteSize() + " bytes of " + format);
        }
        try {
            quantize.get(format).invokeExact(x, out, count);
        } catch (Throwable e) {
            throw new IllegalStateException("native quantization failed", e);
        }
    }

    /**
     * {@code out[r·outStride + i] = w[i] · act[r]} for weight rows {@code from ≤ i < to} ({@code rowBytes} apart in
     * {@code w}, k weights of {@code weights}) and activation rows {@code r < actRows}, back to back in {@code act}.
     */
    void matmul(DType weights, MemorySegment w, long rowBytes, int from, int to, MemorySegment act, int actRows, int k,
            MemorySegment out, long outStride) {
        Activations format = Activations.of(weights);
        if (k <= 0 || k % weights.blockElements() != 0 || rowBytes != weights.rowBytes(k) || from < 0 || from > to
                || actRows < 1 || w.byteSize() < to * rowBytes || act.byteSize() < actRows * format.rowBytes(k)
                || outStride < to || out.byteSize() < ((actRows - 1) * outStride + to) * Float.BYTES) {
            throw new IllegalArgumentException("bad native matmul: " + weights + " rows " + from + ".." + to + " of "
                    + rowBytes + " bytes in " + w.byteSize() + ", " + actRows + " activation rows of k = " + k
                    + " in " + act.byteSize() + " bytes, out stride " + outStride + " in " + out.byteSize() + " bytes");
        }
        try {
            matmul.get(weights).invokeExact(w, rowBytes, from, to, act, actRows, k, out, outStride);
        } catch (Throwable e) {
            throw new IllegalStateException("native matmul failed", e);
        }
    }

    /**
     * {@code out[r·outStride + i] = w[i] · act[r]} for rows {@code from ≤ i < to} of an uploaded weight: on its
     * repacked rows where it has them and they are ready (then from and to are whole groups, as the callers' units of
     * 64 rows are), else on its rows as stored. The same floats either way.
     */
    void matmul(CpuWeight w, int from, int to, MemorySegment act, int actRows, MemorySegment out, long outStride) {
        RepackedRows packed = w.repacked();
        if (packed != null && packed.ready()) matmul(packed, from, to, act, actRows, out, outStride);
        else matmul(w.dtype(), w.data(), w.rowBytes(), from, to, act, actRows, (int) w.columns(), out, outStride);
    }

    /**
     * Bytes of {@code rows} rows of k weights of {@code weights} in the library's repacked layout: 0 where the format
     * has none (or the library no repacked layouts at all).
     */
    long repackedBytes(DType weights, long rows, int k) {
        if (repackedBytes == null || !weights.isQuantized()) return 0;
        try (Arena arena = Arena.ofConfined()) {
            return (long) repackedBytes.invokeExact(arena.allocateFrom(weights.kernelName()), rows, k);
        } catch (Throwable e) {
            throw new IllegalStateException("fs_repacked_bytes failed", e);
        }
    }

    /** Whether {@code weights} has a repacked layout and its matmul here. */
    boolean repacks(DType weights) {
        return repack.containsKey(weights);
    }

    /**
     * Room for {@code rows} rows (whole groups) of k weights of {@code weights} in the repacked layout, from
     * {@code memory}, zeroed, 64-byte aligned; {@link #repack} fills it.
     */
    RepackedRows allocateRepacked(DType weights, int rows, int k, SegmentAllocator memory) {
        long group = repackedBytes(weights, GROUP_ROWS, k), total = repackedBytes(weights, rows, k);
        if (!repacks(weights) || rows <= 0 || rows % GROUP_ROWS != 0 || k <= 0 || k % weights.blockElements() != 0
                || group <= 0 || total != rows / GROUP_ROWS * group) {
            throw new IllegalArgumentException("no repacked layout of " + rows + " rows of " + k + " " + weights
                    + " weights (" + total + " bytes, " + group + " per group of " + GROUP_ROWS + ")");
        }
        return new RepackedRows(weights, rows, k, memory.allocate(total, 64));
    }

    /**
     * Groups {@code groupFrom..groupTo-1} of the weight {@code w} (its rows {@code rowBytes} apart) into their place
     * in {@code packed}.
     */
    void repack(MemorySegment w, long rowBytes, int groupFrom, int groupTo, RepackedRows packed) {
        DType weights = packed.dtype();
        if (rowBytes != weights.rowBytes(packed.k()) || groupFrom < 0 || groupFrom > groupTo
                || groupTo > packed.rows() / GROUP_ROWS || w.byteSize() < (long) groupTo * GROUP_ROWS * rowBytes) {
            throw new IllegalArgumentException("bad repacking: " + weights + " groups " + groupFrom + ".." + groupTo
                    + " of rows of " + rowBytes + " bytes in " + w.byteSize() + ", into " + packed.rows() + " rows of k = "
                    + packed.k());
        }
        try {
            repack.get(weights).invokeExact(w, rowBytes, groupFrom, groupTo, packed.k, packed.data);
        } catch (Throwable e) {
            throw new IllegalStateException("native repacking failed", e);
        }
    }

    /**
     * As {@link #matmul} on the rows {@code packed} holds: {@code out[r·outStride + i] = w[i] · act[r]} for weight
     * rows {@code from ≤ i < to}, both multiples of {@link #GROUP_ROWS}, the same floats bit for bit.
     */
    void matmul(RepackedRows packed, int from, int to, MemorySegment act, int actRows, MemorySegment out,
            long outStride) {
        DType weights = packed.dtype();
        int k = packed.k();
        if (from < 0 || from > to || to > packed.rows() || from % GROUP_ROWS != 0 || to % GROUP_ROWS != 0
                || actRows < 1 || act.byteSize() < actRows * Activations.of(weights).rowBytes(k) || outStride < to
                || out.byteSize() < ((actRows - 1) * outStride + to) * Float.BYTES) {
            throw new IllegalArgumentException("bad repacked native matmul: " + weights + " rows " + from + ".." + to
                    + " of " + packed.rows() + ", " + actRows + " activation rows of k = " + k + " in "
                    + act.byteSize() + " bytes, out stride " + outStride + " in " + out.byteSize() + " bytes");
        }
        try {
            repackedMatmul.get(weights).invokeExact(packed.data, from, to, act, actRows, k, out, outStride);
        } catch (Throwable e) {
            throw new IllegalStateException("native matmul failed", e);
        }
    }

    /**
     * A weight's rows in libfscpu's repacked layout: {@code rows / GROUP_ROWS} groups of
     * {@code fs_repacked_bytes(F, GROUP_ROWS, k)} bytes, group g at g times that. Made by {@link #allocateRepacked}
     * alone, which takes its size from the library, so the checks above can trust it.
     */
    static final class RepackedRows {
        private final DType dtype;
        private final int rows;
        private final int k;
        private final MemorySegment data;
        /** Set once {@link #data} holds every row (written by the repacker's thread before it sets this). */
        private volatile boolean ready;

        private RepackedRows(DType dtype, int rows, int k, MemorySegment data) {
            this.dtype = dtype;
            this.rows = rows;
            this.k = k;
            this.data = data;
        }

        DType dtype() {
            return dtype;
        }

        int rows() {
            return rows;
        }

        int k() {
            return k;
        }

        long bytes() {
            return data.byteSize();
        }

        /** Whether the rows are all copied here: until then the matmuls read the weight's own rows. */
        boolean ready() {
            return ready;
        }

        void markReady() {
            ready = true;
        }
    }
}
