package fs.quantize;

import fs.FsException;
import fs.format.ReferenceDequantizer;
import fs.format.RowQuantizer;
import fs.gguf.GgufFileWriter;
import fs.gguf.GgufValue;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * Writes a {@link QuantizationPlan} as a GGUF file: each tensor's rows are read from its source (mapped, as the
 * model sources give them), widened to float, quantized by the {@link RowQuantizer} of the planned type and written
 * in the plan's order. A tensor already in its planned type is copied as it is, as llama-quantize does. The work is
 * cut into pieces of at most {@link #PIECE_ELEMENTS} weights (whole rows) that {@code threads} threads quantize
 * while the calling thread writes the finished ones in order; at most two pieces per thread are in flight, so memory
 * stays bounded whatever the model's size, and the output is written once, streaming.
 *
 * <p>A mixture of experts' stack ([experts, out, in]) is quantized row by row like any matrix, each expert with its
 * own importance (llama-quantize's per-expert imatrix slice); a piece never spans two experts. Its rows come from the
 * GGUF stack itself or, from a Hugging Face checkpoint, from each expert's [out, in] matrix in turn, the stack
 * convert_hf_to_gguf.py writes, without a copy of it ({@link #prepareParts}).
 */
public final class QuantizationRun {
    /** Weights per piece of work: 4 MB of floats, small next to any machine, large next to a row. */
    static final int PIECE_ELEMENTS = 1 << 20;

    private final QuantizationPlan plan;
    /** Per plan entry, its rows' sources in order: one tensor, or one per expert of a stack. */
    private final List<List<Tensor>> sources;
    private final Map<DType, RowQuantizer> quantizers;
    /** Per plan entry, the importance of its columns (of each expert's in turn, for a stack), or null. */
    private final List<float[]> importance;

    private QuantizationRun(QuantizationPlan plan, List<List<Tensor>> sources, Map<DType, RowQuantizer> quantizers,
            List<float[]> importance) {
        this.plan = plan;
        this.sources = sources;
        this.quantizers = quantizers;
        this.importance = importance;
    }

    /** A run of rows of one tensor: plan entry {@code entry}, rows [firstRow, firstRow + rows). */
    private record Piece(int entry, long firstRow, int rows, boolean last) {}

    /**
     * Checks everything that can be checked before a byte is written: every tensor has a source of its shape, in a
     * type that can be converted, every planned type has a quantizer, the importance matrix fits. {@code sources}
     * are the model's tensors by their GGUF names; {@code importance} may be null.
     */
    public static QuantizationRun prepare(QuantizationPlan plan, Map<String, Tensor> sources,
            Function<DType, RowQuantizer> quantizerOf, ImportanceMatrix importance) {
        Map<String, List<Tensor>> parts = new java.util.LinkedHashMap<>();
        sources.forEach((name, tensor) -> parts.put(name, List.of(tensor)));
        return prepareParts(plan, parts, quantizerOf, importance);
    }

    /**
     * As {@link #prepare}, each tensor's rows read from its {@code parts} in turn: one tensor of the entry's shape, or
     * (a Hugging Face mixture of experts) each expert's [out, in] matrix of an [experts, out, in] entry, in expert
     * order, all in one dtype.
     */
    public static QuantizationRun prepareParts(QuantizationPlan plan, Map<String, List<Tensor>> sources,
            Function<DType, RowQuantizer> quantizerOf, ImportanceMatrix importance) {
        List<List<Tensor>> ordered = new ArrayList<>();
        Map<DType, RowQuantizer> quantizers = new EnumMap<>(DType.class);
        List<float[]> weighting = new ArrayList<>();
        for (QuantizationPlan.Entry entry : plan.tensors()) {
            List<Tensor> parts = sources.get(entry.name());
            if (parts == null || !fits(parts, entry)) {
                throw new IllegalArgumentException("no source of shape " + Arrays.toString(entry.shape()) + " for "
                        + entry.name());
            }
            ordered.add(List.copyOf(parts));
            DType stored = parts.getFirst().dtype();
            boolean converted = stored != entry.type();
            if (converted && !isPlain(stored)) {
                throw new FsException(entry.name() + " is stored as " + stored + ": fs quantize converts F32, "
                        + "F16 and BF16 weights, it does not requantize (that would compound two roundings)");
            }
            if (converted) quantizers.computeIfAbsent(entry.type(), quantizerOf);
            weighting.add(converted ? importance(entry, importance) : null);
        }
        return new QuantizationRun(plan, ordered, quantizers, weighting);
    }

    /** One tensor of the entry's shape, or one [out, in] matrix per expert of an [experts, out, in] entry. */
    private static boolean fits(List<Tensor> parts, QuantizationPlan.Entry entry) {
        long[] shape = entry.shape();
        if (parts.size() == 1) return Arrays.equals(parts.getFirst().shape(), shape);
        if (shape.length != 3 || parts.size() != shape[0]) return false;
        DType dtype = parts.getFirst().dtype();
        for (Tensor part : parts) {
            if (part.dtype() != dtype || !Arrays.equals(part.shape(), new long[] {shape[1], shape[2]})) return false;
        }
        return true;
    }

    /** The matrices an entry holds: an [experts, out, in] stack's experts, else 1. */
    static long matrices(QuantizationPlan.Entry entry) {
        long[] shape = entry.shape();
        return shape.length == 3 ? shape[0] : 1;
    }

    private static boolean isPlain(DType type) {
        return type == DType.F32 || type == DType.F16 || type == DType.BF16;
    }

    /**
     * What llama-quantize does with the matrix: a wrong width is an error (the embedding's is ignored); a stack of
     * experts needs one importance per column of each expert (llama-imatrix's per-expert entry).
     */
    private static float[] importance(QuantizationPlan.Entry entry, ImportanceMatrix matrix) {
        float[] columns = matrix == null ? null : matrix.importance(entry.name()).orElse(null);
        long matrices = matrices(entry);
        if (columns != null && columns.length != entry.columns() * matrices) {
            if (entry.name().equals(QuantizationPlan.EMBEDDING)) return null;
            throw new FsException("the importance matrix has " + columns.length + " values for " + entry.name()
                    + ", which needs " + entry.columns() + (matrices > 1 ? " for each of its " + matrices + " experts"
                    : "") + ": it was made for another model");
        }
        if (columns == null && entry.needsImportance()) {
            throw new FsException(matrix == null
                    ? entry.name() + " is planned as " + entry.type() + ", which needs an importance matrix "
                            + "(--imatrix FILE, made by fs imatrix or llama-imatrix), as llama.cpp requires"
                    : "the importance matrix has no entry for " + entry.name() + ", which is planned as "
                            + entry.type() + " and needs one");
        }
        return columns;
    }

    /** Writes the file {@code out} with this metadata, quantizing on {@code threads} threads. */
    public void write(Path out, Map<String, GgufValue> metadata, int threads, QuantizationProgress progress) {
        List<GgufFileWriter.TensorInfo> infos = new ArrayList<>();
        for (QuantizationPlan.Entry entry : plan.tensors()) {
            infos.add(new GgufFileWriter.TensorInfo(entry.name(), entry.type(), entry.shape()));
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads, task -> {
            Thread thread = new Thread(task, "fs-quantize");
            thread.setDaemon(true);
            return thread;
        });
        boolean ok = false;
        try (GgufFileWriter writer = GgufFileWriter.create(out, metadata, infos)) {
            ArrayDeque<Piece> queued = new ArrayDeque<>();
            ArrayDeque<Future<MemorySegment>> inFlight = new ArrayDeque<>();
            PieceCursor cursor = new PieceCursor();
            while (true) {
                while (inFlight.size() < 2 * threads && cursor.hasNext()) {
                    Piece piece = cursor.next();
                    queued.add(piece);
                    inFlight.add(pool.submit(() -> run(piece)));
                }
                if (inFlight.isEmpty()) break;
                Piece piece = queued.remove();
                MemorySegment bytes = result(inFlight.remove());
                writer.write(bytes);
                progress.advance(plan.tensors().get(piece.entry()).name(), bytes.byteSize(), piece.last());
            }
            writer.finish();
            ok = true;
        } finally {
            pool.shutdownNow();
            progress.finish(ok, out.toString());
        }
    }

    private static MemorySegment result(Future<MemorySegment> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FsException("interrupted");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) throw runtime;
            if (e.getCause() instanceof Error error) throw error;
            throw new IllegalStateException(e.getCause());
        }
    }

    /** The bytes of one piece in its planned type: the source's own when it is already in it, else quantized. */
    private MemorySegment run(Piece piece) {
        QuantizationPlan.Entry entry = plan.tensors().get(piece.entry());
        List<Tensor> parts = sources.get(piece.entry());
        long partRows = entry.rows() / parts.size();
        Tensor source = parts.get(Math.toIntExact(piece.firstRow() / partRows));
        int columns = Math.toIntExact(entry.columns());
        long sourceRowBytes = source.dtype().rowBytes(columns);
        MemorySegment rows = source.data().asSlice(piece.firstRow() % partRows * sourceRowBytes,
                piece.rows() * sourceRowBytes);
        if (source.dtype() == entry.type()) return rows;
        float[] weights = new float[piece.rows() * columns];
        ReferenceDequantizer.decode(source.dtype(), rows, weights);
        MemorySegment quantized =
                MemorySegment.ofArray(new byte[Math.toIntExact(piece.rows() * entry.type().rowBytes(columns))]);
        RowQuantizer quantizer = quantizers.get(entry.type());
        quantizer.quantize(weights, piece.rows(), columns, importance(piece, entry), quantized, 0);
        return quantized;
    }

    /** The importance of the piece's matrix (its expert's slice of a stack's), or null. */
    private float[] importance(Piece piece, QuantizationPlan.Entry entry) {
        float[] all = importance.get(piece.entry());
        long matrices = matrices(entry);
        if (all == null || matrices == 1) return all;
        int columns = Math.toIntExact(entry.columns());
        int expert = Math.toIntExact(piece.firstRow() / (entry.rows() / matrices));
        return Arrays.copyOfRange(all, expert * columns, (expert + 1) * columns);
    }

    /** The pieces of every tensor, in plan order; a tensor with no rows is none. */
    private final class PieceCursor {
        private int entry;
        private long row;

        boolean hasNext() {
            while (entry < plan.tensors().size()
                    && (row >= plan.tensors().get(entry).rows() || plan.tensors().get(entry).bytes() == 0)) {
                entry++;
                row = 0;
            }
            return entry < plan.tensors().size();
        }

        Piece next() {
            QuantizationPlan.Entry current = plan.tensors().get(entry);
            long rowsLeft = current.rows() - row;
            long matrixRows = current.rows() / Math.max(matrices(current), sources.get(entry).size());
            long rowsLeftInMatrix = matrixRows - row % matrixRows; // a piece stays within one expert
            int rows = (int) Math.min(Math.min(rowsLeft, rowsLeftInMatrix),
                    Math.max(1, PIECE_ELEMENTS / current.columns()));
            Piece piece = new Piece(entry, row, rows, rows == rowsLeft);
            row += rows;
            return piece;
        }
    }
}
