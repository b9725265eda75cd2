package fs.backend.cpu;

import fs.backend.cpu.NativeKernels.RepackedRows;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Repacks weights at upload for the native matmuls ({@link NativeKernels#allocateRepacked}: groups of 16 rows
 * interleaved block by block, which the x16 kernels read 16 rows per instruction), on the backend's
 * {@link WorkerPool}, into memory of the backend's arena (freed when it closes; in huge pages, {@link HugePageMemory});
 * then releases the tensor's file pages.
 *
 * <p>Why release them: repacking reads every byte of the tensor, so its pages of the file mapping are resident
 * afterwards, and the process would hold each repacked weight twice. The mapping is read-only, so dropping its pages
 * ({@link MemorySegment#unload}, madvise MADV_DONTNEED on Linux) loses nothing: whatever still reads the tensor's
 * own bytes (an embedding row, the Vector API path, verify) faults them back in from the file.
 *
 * <p>Linux's page cache may hold a file in large folios (xfs's, and ext4's on recent kernels), and a fault then maps
 * the whole folio around the page it reads: a later upload, or a forward, that reads a small tensor beside a released
 * one maps back the released pages of the folio they share. (Qwen3-0.6B in Q4_0 on ext4 under Linux 6.18, the file in
 * a warm page cache: 53 of its 236 MB of Q4_0 were mapped again after one forward, /proc/self/pagemap said.) Hence the
 * backend copies the single-row weights (norms) when it repacks ({@link #copy}), and releases every repacked tensor's
 * pages once more after the uploads ({@link #releaseAgain}), when the first op runs: then 2 pages per tensor stay.
 */
final class Repacker implements WorkerPool.Task {
    /** Groups of 16 rows per unit of work: 256 rows, 144 KiB of Q4_K at 1024 columns. */
    private static final int GROUPS_PER_UNIT = 16;
    /**
     * Pages are released whole, inside the tensor: its first and last partial pages hold other tensors' bytes too,
     * which stay. (Where the OS's pages are larger, the JDK widens the range to them; a read-only mapping reads back
     * whatever of it is touched again.)
     */
    private static final long PAGE = 4096;

    private final WorkerPool pool;
    private final NativeKernels kernels;
    private final Arena arena;
    /** Where the repacked weights go: huge pages where Linux gives them. */
    private final HugePageMemory memory;

    /** The file bytes released at upload, to release again after the uploads; empty once that is done. */
    private final List<MemorySegment> released = new ArrayList<>();

    // the current tensor
    private MemorySegment source;
    private long rowBytes;
    private RepackedRows target;
    private int groups;

    Repacker(WorkerPool pool, NativeKernels kernels, Arena arena) {
        this.pool = pool;
        this.kernels = kernels;
        this.arena = arena;
        this.memory = new HugePageMemory(arena);
    }

    /**
     * The rows of a weight the caller checked ({@link fs.backend.BackendChecks#checkUpload}) in the repacked
     * layout, or null where its format has none or its rows are not whole groups of 16.
     */
    RepackedRows repack(Tensor tensor) {
        int rows = (int) tensor.rows(), k = (int) tensor.columns();
        if (tensor.rank() != 2 || rows % NativeKernels.GROUP_ROWS != 0 || !repacksAtUpload(tensor.dtype())
                || kernels.repackedBytes(tensor.dtype(), rows, k) == 0) {
            return null;
        }
        RepackedRows packed = kernels.allocateRepacked(tensor.dtype(), rows, k, memory);
        source = tensor.data();
        rowBytes = tensor.dtype().rowBytes(k);
        target = packed;
        groups = rows / NativeKernels.GROUP_ROWS;
        try {
            pool.run(this, (groups + GROUPS_PER_UNIT - 1) / GROUPS_PER_UNIT);
        } finally {
            source = null;
            target = null;
        }
        releaseFilePages(tensor.data());
        released.add(tensor.data());
        return packed;
    }

    /**
     * Whether weights of this format are repacked at upload: every format the kernels have a repacked layout for,
     * but Q8_0 only on avx512 and avx2, Q6_K only on avx512, Q2_K and Q3_K on avx512 and avx2. Q8_0's x16 kernel on
     * avx512, 16 rows' int32 in a zmm, runs a 1024×3072 matmul of 8 or 128 rows at about twice the unpacked kernel's
     * speed (fscpu_bench, native/cpu/README.md); on avx2 (Zen 4 with -XX:UseAVX=2, 2026-12-04) it took a
     * Qwen3-0.6B-shaped Q8_0 file's pp128 from 131–143 to 194–204 tok/s and its tg64 from 41 to 43–48, the
     * 151,936-row lm_head repacked or not. Q6_K's x16 kernel on avx2 took the Q6_K file's pp128 from 142 to 162–170
     * but its tg64 from 50–51 to 43–46 (the lm_head kept unpacked or not), so at 256 bits Q6_K keeps the file's rows:
     * decode is what a chat waits on. Q2_K's, whose unpacked kernel is bound by instructions, was faster on every
     * shape on avx512 and avx2, and so was Q3_K's. avxvnni, which no CPU here had (an earlier measurement on Zen 5 had
     * Q8_0's x16 slower on the lm_head's decode there, 31 → 27 Gmac/s), keeps reading them in place until it is timed.
     */
    boolean repacksAtUpload(DType type) {
        String isa = kernels.isa();
        return kernels.repacks(type) && switch (type) {
            case Q6_K -> isa.equals("avx512");
            case Q8_0, Q2_K, Q3_K -> isa.equals("avx512") || isa.equals("avx2");
            default -> true;
        };
    }

    /** A single-row weight's bytes in the arena, so that reading it never maps the file's pages around it. */
    MemorySegment copy(MemorySegment row) {
        return arena.allocate(row.byteSize(), 64).copyFrom(row);
    }

    /** Releases the file pages of the tensors repacked since the last call again (see above); cheap when none. */
    void releaseAgain() {
        if (released.isEmpty()) return;
        for (MemorySegment data : released) releaseFilePages(data);
        released.clear();
    }

    @Override
    public void run(int unit, int worker) {
        int from = unit * GROUPS_PER_UNIT;
        kernels.repack(source, rowBytes, from, Math.min(groups, from + GROUPS_PER_UNIT), target);
    }

    /** Drops the whole pages of a read-only file mapping inside {@code data} from this process's memory. */
    private static void releaseFilePages(MemorySegment data) {
        if (!data.isMapped() || !data.isReadOnly()) return;
        long start = data.address(), end = start + data.byteSize();
        long first = (start + PAGE - 1) & -PAGE, last = end & -PAGE;
        if (first < last) data.asSlice(first - start, last - first).unload();
    }
}
