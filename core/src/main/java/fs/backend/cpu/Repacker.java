package fs.backend.cpu;

import fs.backend.cpu.NativeKernels.RepackedRows;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Repacks weights for the native matmuls ({@link NativeKernels#allocateRepacked}: groups of 16 rows interleaved block
 * by block, which the x16 kernels read 16 rows per instruction), into memory of the backend's arena (freed when it
 * closes; in huge pages, {@link HugePageMemory}); then releases the tensor's file pages.
 *
 * <p>The copies are made on a thread of the repacker's own, in upload order, while the model starts: an upload only
 * takes the memory, and a matmul reads the file's rows until its weight's copy is {@link RepackedRows#ready} (the
 * kernels of both layouts give the same floats, bit for bit). Why: a process's first touch of fresh huge pages runs
 * at 0.5-3 GB/s on this VM kind (the kernel zeroes them as the hypervisor backs them), so repacking the 373 MB of a
 * Qwen3-0.6B Q4_K_M file made its load 0.44 s → 1.3 s before the first token could begin. {@link #finish} waits for
 * the copies (benchmarks, tests of the repacked kernels).
 *
 * <p>Why release the file pages: repacking reads every byte of the tensor, so its pages of the file mapping are
 * resident afterwards, and the process would hold each repacked weight twice. The mapping is read-only, so dropping
 * its pages ({@link MemorySegment#unload}, madvise MADV_DONTNEED on Linux) loses nothing: whatever still reads the
 * tensor's own bytes (an embedding row, the Vector API path, verify, a matmul before the copy is ready) faults them
 * back in from the file.
 *
 * <p>Linux's page cache may hold a file in large folios (xfs's, and ext4's on recent kernels), and a fault then maps
 * the whole folio around the page it reads: a later upload, or a forward, that reads a small tensor beside a released
 * one maps back the released pages of the folio they share. (Qwen3-0.6B in Q4_0 on ext4 under Linux 6.18, the file in
 * a warm page cache: 53 of its 236 MB of Q4_0 were mapped again after one forward, /proc/self/pagemap said.) Hence the
 * backend copies the single-row weights (norms) when it repacks ({@link #copy}), and releases every repacked tensor's
 * pages once more when all the copies are made ({@link #releaseAgain}), at the next op: then 2 pages per tensor stay.
 *
 * <p>Threads: {@link #repack}, {@link #copy} and {@link #releaseAgain} on the backend's calling thread, the copies on
 * the repacker's; the queue, the count of copies to make, the failure and the released list under its lock.
 */
final class Repacker implements AutoCloseable {
    /** Groups of 16 rows per native call: 256 rows, 144 KiB of Q4_K at 1024 columns; closing waits for one call. */
    private static final int GROUPS_PER_CALL = 16;
    /**
     * Pages are released whole, inside the tensor: its first and last partial pages hold other tensors' bytes too,
     * which stay. (Where the OS's pages are larger, the JDK widens the range to them; a read-only mapping reads back
     * whatever of it is touched again.)
     */
    private static final long PAGE = 4096;

    /** A weight to copy: its rows in the file, and where they go. */
    private record Copy(MemorySegment source, long rowBytes, RepackedRows target) {}

    private final NativeKernels kernels;
    private final Arena arena;
    /** Where the repacked weights go: huge pages where Linux gives them. */
    private final HugePageMemory memory;

    private final ArrayDeque<Copy> queue = new ArrayDeque<>();
    /** Copies queued or being made. */
    private int pending;
    private boolean closing;
    /** What a copy threw; the backend's next op (or {@link #finish}) throws it. */
    private Throwable failure;
    /** The file bytes released after their copies, to release again when all are made; empty once that is done. */
    private final List<MemorySegment> released = new ArrayList<>();
    /** Whether there is a failure to throw or pages to release again: read by every op without the lock. */
    private volatile boolean due;
    private Thread thread;

    Repacker(NativeKernels kernels, Arena arena) {
        this.kernels = kernels;
        this.arena = arena;
        this.memory = new HugePageMemory(arena);
    }

    /**
     * The rows of a weight the caller checked ({@link fs.backend.BackendChecks#checkUpload}) in the repacked
     * layout, copied there on the repacker's thread; or null where its format has none or its rows are not whole
     * groups of 16.
     */
    RepackedRows repack(Tensor tensor) {
        int rows = (int) tensor.rows(), k = (int) tensor.columns();
        if (tensor.rank() != 2 || rows % NativeKernels.GROUP_ROWS != 0 || !repacksAtUpload(tensor.dtype())
                || kernels.repackedBytes(tensor.dtype(), rows, k) == 0) {
            return null;
        }
        RepackedRows packed = kernels.allocateRepacked(tensor.dtype(), rows, k, memory);
        synchronized (this) {
            if (closing) throw new IllegalStateException("the backend is closed");
            queue.add(new Copy(tensor.data(), tensor.dtype().rowBytes(k), packed));
            pending++;
            if (thread == null) {
                thread = new Thread(this::copyAll, "fs-cpu-repack");
                thread.setDaemon(true);
                thread.start();
            }
            notifyAll();
        }
        return packed;
    }

    /**
     * Whether weights of this format are repacked at upload: every format the kernels have a repacked layout for,
     * but Q8_0, Q6_K, Q2_K and Q3_K only on avx512 and avx2. Q8_0's x16 kernel on avx512, 16 rows' int32 in a zmm,
     * runs a 1024×3072 matmul of 8 or 128 rows at about twice the unpacked kernel's speed (fscpu_bench,
     * native/cpu/README.md); on avx2 (Zen 4 with -XX:UseAVX=2, 2026-12-04) it took a Qwen3-0.6B-shaped Q8_0 file's
     * pp128 from 131–143 to 194–204 tok/s and its tg64 from 41 to 43–48, the 151,936-row lm_head repacked or not.
     * Q6_K's x16 kernel on avx2 took the Q6_K file's pp128 from 111–142 to 152–170; its decode, slower (tg64 50–51
     * → 43–46) while the pool's threads took 64-row units in turn, was a tie or better once each took a contiguous
     * range (48.0, 44.1 → 49.9, 50.7; the Q4_K_M file 44.8, 43.8 → 46.2, 42.1). Q2_K's, whose unpacked kernel is
     * bound by instructions, was faster on every shape on avx512 and avx2, and so was Q3_K's. avxvnni, which no CPU
     * here had (an earlier measurement on Zen 5 had Q8_0's x16 slower on the lm_head's decode there, 31 → 27
     * Gmac/s), keeps reading them in place until it is timed.
     */
    boolean repacksAtUpload(DType type) {
        String isa = kernels.isa();
        return kernels.repacks(type) && switch (type) {
            case Q8_0, Q6_K, Q2_K, Q3_K -> isa.equals("avx512") || isa.equals("avx2");
            default -> true;
        };
    }

    /** A single-row weight's bytes in the arena, so that reading it never maps the file's pages around it. */
    MemorySegment copy(MemorySegment row) {
        return arena.allocate(row.byteSize(), 64).copyFrom(row);
    }

    /**
     * Throws what a copy threw; once every copy is made, releases the file pages of the repacked tensors again (see
     * above). Cheap when there is nothing to do: every op calls it.
     */
    void releaseAgain() {
        if (!due) return;
        List<MemorySegment> again;
        synchronized (this) {
            throwFailure();
            if (pending > 0) return;
            again = List.copyOf(released);
            released.clear();
            due = false;
        }
        for (MemorySegment data : again) releaseFilePages(data);
    }

    /** Returns when every weight repacked so far is copied, and throws what a copy threw. */
    void finish() {
        boolean interrupted = false;
        synchronized (this) {
            while (pending > 0 && failure == null) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            throwFailure();
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    /** Stops copying (a copy under way ends after its current call) and waits for the thread. */
    @Override
    public void close() {
        Thread copying;
        synchronized (this) {
            closing = true;
            queue.clear();
            copying = thread;
            notifyAll();
        }
        if (copying == null) return;
        boolean interrupted = false;
        while (copying.isAlive()) {
            try {
                copying.join();
            } catch (InterruptedException e) {
                interrupted = true; // the arena must outlive the thread that writes into it
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    /** Under the lock. */
    private void throwFailure() {
        Throwable e = failure;
        if (e == null) return;
        failure = null;
        if (e instanceof RuntimeException r) throw r;
        if (e instanceof Error r) throw r;
        throw new IllegalStateException(e);
    }

    /** The repacker's thread: the queued copies in order, until the backend closes. */
    private void copyAll() {
        while (true) {
            Copy copy;
            synchronized (this) {
                while (queue.isEmpty() && !closing) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        // only close() ends this thread: the arena must outlive it
                    }
                }
                if (closing) return;
                copy = queue.poll();
            }
            Throwable thrown = null;
            try {
                int groups = copy.target().rows() / NativeKernels.GROUP_ROWS;
                for (int from = 0; from < groups; from += GROUPS_PER_CALL) {
                    synchronized (this) {
                        if (closing) return;
                    }
                    kernels.repack(copy.source(), copy.rowBytes(), from, Math.min(groups, from + GROUPS_PER_CALL),
                            copy.target());
                }
                copy.target().markReady();
                releaseFilePages(copy.source());
            } catch (Throwable e) {
                thrown = e;
            }
            synchronized (this) {
                if (thrown != null && failure == null) failure = thrown;
                if (thrown == null) released.add(copy.source());
                pending--;
                due = true;
                notifyAll();
            }
        }
    }

    /** Drops the whole pages of a read-only file mapping inside {@code data} from this process's memory. */
    private static void releaseFilePages(MemorySegment data) {
        if (!data.isMapped() || !data.isReadOnly()) return;
        long start = data.address(), end = start + data.byteSize();
        long first = (start + PAGE - 1) & -PAGE, last = end & -PAGE;
        if (first < last) data.asSlice(first - start, last - first).unload();
    }
}
