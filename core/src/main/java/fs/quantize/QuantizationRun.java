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
 */
public final class QuantizationRun {
    /** Weights per piece of work: 4 MB of floats, small next to any machine, large next to a row. */
    static final int PIECE_ELEMENTS = 1 << 20;

    private final QuantizationPlan plan;
    private final List<Tensor> sources;
    private final Map<DType, RowQuantizer> quantizers;
    /** Per plan entry, the importance of its columns, or null. */
    private final List<float[]> importance;

    private QuantizationRun(QuantizationPlan plan, List<Tensor> sources, Map<DType, RowQuantizer> quantizers,
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
        List<Tensor> ordered = new ArrayList<>();
        Map<DType, RowQuantizer> quantizers = new EnumMap<>(DType.class);
        List<float[]> weighting = new ArrayList<>();
        for (QuantizationPlan.Entry entry : plan.tensors()) {
            Tensor source = sources.get(entry.name());
            if (source == null || !Arrays.equals(source.shape(), entry.shape())) {
                throw new IllegalArgumentException("no source of shape " + Arrays.toString(entry.shape()) + " for "
                        + entry.name());
            }
            ordered.add(source);
            boolean converted = source.dtype() != entry.type();
            if (converted && !isPlain(source.dtype())) {
                throw new FsException(entry.name() + " is stored as " + source.dtype() + ": fs quantize converts F32, "
                        + "F16 and BF16 weights, it does not requantize (that would compound two roundings)");
            }
            if (converted) quantizers.computeIfAbsent(entry.type(), quantizerOf);
            weighting.add(converted ? importance(entry, importance) : null);
        }
        return new QuantizationRun(plan, ordered, quantizers, weighting);
    }

    private static boolean isPlain(DType type) {
        return type == DType.F32 || type == DType.F16 || type == DType.BF16;
    }

    /** What llama-quantize does with the matrix: a wrong width is an error (the embedding's is ignored). */
    private static float[] importance(QuantizationPlan.Entry entry, ImportanceMatrix matrix) {
        float[] columns = matrix == null ? null : matrix.importance(entry.name()).orElse(null);
        if (columns != null && columns.length != entry.columns()) {
            if (entry.name().equals(QuantizationPlan.EMBEDDING)) return null;
            throw new FsException("the importance matrix has " + columns.length + " columns for " + entry.name()
                    + ", which has " + entry.columns() + ": it was made for another model");
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
        Tensor source = sources.get(piece.entry());
        int columns = Math.toIntExact(entry.columns());
        long sourceRowBytes = source.dtype().rowBytes(columns);
        MemorySegment rows = source.data().asSlice(piece.firstRow() * sourceRowBytes, piece.rows() * sourceRowBytes);
        if (source.dtype() == entry.type()) return rows;
        float[] weights = new float[piece.rows() * columns];
        ReferenceDequantizer.decode(source.dtype(), rows, weights);
        MemorySegment quantized =
                MemorySegment.ofArray(new byte[Math.toIntExact(piece.rows() * entry.type().rowBytes(columns))]);
        RowQuantizer quantizer = quantizers.get(entry.type());
        quantizer.quantize(weights, piece.rows(), columns, importance.get(piece.entry()), quantized, 0);
        return quantized;
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
            int rows = (int) Math.min(rowsLeft, Math.max(1, PIECE_ELEMENTS / current.columns()));
            Piece piece = new Piece(entry, row, rows, rows == rowsLeft);
            row += rows;
            return piece;
        }
    }
}
