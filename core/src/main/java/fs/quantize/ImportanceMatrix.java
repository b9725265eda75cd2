package fs.quantize;

import fs.FsException;
import fs.Quoted;
import fs.gguf.GgufArray;
import fs.gguf.GgufFile;
import fs.gguf.GgufFileWriter;
import fs.gguf.GgufMetadata;
import fs.gguf.GgufTensor;
import fs.gguf.GgufValue;
import fs.gguf.GgufValueType;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * An importance matrix: for each matrix of a model (by its GGUF name), the sum over some text of the squares of each
 * input column's activations, and how many activation rows (tokens) were summed; {@link #importance} is their mean,
 * how much each column's weights matter. Stored in llama.cpp's imatrix GGUF layout (tools/imatrix/imatrix.cpp):
 * general.type "imatrix", imatrix.datasets (the texts' names), imatrix.chunk_count and imatrix.chunk_size (windows
 * of how many tokens), and per matrix NAME two F32 tensors, NAME.in_sum2 (one sum per column) and NAME.counts (one
 * count), sorted by name. A mixture of experts' stack (blk.N.ffn_*_exps.weight) has one entry per expert, as
 * llama-imatrix stores it: NAME.in_sum2 [experts, columns] (ggml's [columns, experts]), expert e's sums over the
 * activations that expert saw, and NAME.counts [experts, 1], how many rows each expert saw (the tokens that chose it).
 *
 * @param tensors per matrix name, in name order
 */
public record ImportanceMatrix(SortedMap<String, Sums> tensors, List<String> datasets, int chunkCount, int chunkSize) {
    static final String TYPE = "imatrix";
    static final String GENERAL_TYPE = "general.type";
    static final String DATASETS = "imatrix.datasets";
    static final String CHUNK_COUNT = "imatrix.chunk_count";
    static final String CHUNK_SIZE = "imatrix.chunk_size";
    static final String SUMS = ".in_sum2";
    static final String COUNTS = ".counts";
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /**
     * One entry's column sums of squared activations: for each of {@code counts.length} matrices (one, or an expert
     * stack's experts) its columns' sums in turn, over {@code counts[m]} rows.
     */
    public record Sums(float[] sumOfSquares, long[] counts) {
        public Sums {
            sumOfSquares = sumOfSquares.clone();
            counts = counts.clone();
            if (counts.length == 0 || sumOfSquares.length % counts.length != 0) {
                throw new IllegalArgumentException(sumOfSquares.length + " sums are not " + counts.length
                        + " matrices' columns");
            }
            for (long count : counts) if (count < 0) throw new IllegalArgumentException("negative count " + count);
        }

        /** One matrix's sums over {@code count} rows. */
        public Sums(float[] sumOfSquares, long count) {
            this(sumOfSquares, new long[] {count});
        }

        @Override
        public float[] sumOfSquares() {
            return sumOfSquares.clone();
        }

        @Override
        public long[] counts() {
            return counts.clone();
        }

        /** The matrices: 1, or the experts of a stack. */
        public int matrices() {
            return counts.length;
        }

        /** Columns of each matrix. */
        public int columns() {
            return sumOfSquares.length / counts.length;
        }

        /** The rows summed over every matrix: a dense matrix's tokens, a stack's tokens × experts used. */
        public long count() {
            long total = 0;
            for (long count : counts) total += count;
            return total;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Sums that && Arrays.equals(counts, that.counts)
                    && Arrays.equals(sumOfSquares, that.sumOfSquares);
        }

        @Override
        public int hashCode() {
            return 31 * Arrays.hashCode(sumOfSquares) + Arrays.hashCode(counts);
        }

        @Override
        public String toString() {
            return "Sums[" + columns() + " columns" + (counts.length > 1 ? " × " + counts.length + " experts" : "")
                    + ", count " + (counts.length > 1 ? Arrays.toString(counts) : counts[0]) + "]";
        }
    }

    public ImportanceMatrix {
        tensors = Collections.unmodifiableSortedMap(new TreeMap<>(tensors));
        datasets = List.copyOf(datasets);
    }

    /**
     * The mean squared activation of each column of matrix {@code name}, as llama-quantize takes it from the file
     * (sum / count, per expert for a stack, each expert's columns in turn; every column 1 where nothing was
     * counted); empty when the matrix has no entry.
     */
    public Optional<float[]> importance(String name) {
        Sums sums = tensors.get(name);
        if (sums == null) return Optional.empty();
        float[] mean = sums.sumOfSquares();
        int columns = sums.columns();
        for (int m = 0; m < sums.matrices(); m++) {
            float count = sums.counts[m];
            for (int i = m * columns; i < (m + 1) * columns; i++) mean[i] = count > 0 ? mean[i] / count : 1;
        }
        return Optional.of(mean);
    }

    /** Whether {@code file} says it is an importance matrix (general.type "imatrix"), not a model. */
    public static boolean describes(GgufFile file) {
        return file.metadata().get(GENERAL_TYPE).map(type -> TYPE.equals(type.value())).orElse(false);
    }

    /** Reads an imatrix GGUF file as llama-imatrix writes it; every problem is one FsException naming the file. */
    public static ImportanceMatrix read(Path path) {
        try (GgufFile file = GgufFile.open(path)) {
            GgufMetadata metadata = file.metadata();
            if (metadata.has(GENERAL_TYPE) && !TYPE.equals(metadata.get(GENERAL_TYPE).orElseThrow().value())) {
                throw metadata.error(GENERAL_TYPE, "is " + metadata.get(GENERAL_TYPE).orElseThrow().value()
                        + ", not '" + TYPE + "': this is not an importance matrix (fs imatrix makes one)");
            }
            for (String key : List.of(DATASETS, CHUNK_COUNT, CHUNK_SIZE)) {
                if (!metadata.has(key)) {
                    throw new FsException(path + ": key " + Quoted.quote(key) + " is missing: not an importance "
                            + "matrix in llama.cpp's GGUF layout (fs imatrix or llama-imatrix makes one)");
                }
            }
            List<String> datasets = List.of(metadata.array(DATASETS, GgufValueType.STRING).strings());
            int chunkCount = metadata.nonNegativeInt(CHUNK_COUNT);
            int chunkSize = metadata.nonNegativeInt(CHUNK_SIZE);
            Map<String, GgufTensor> sums = new LinkedHashMap<>();
            Map<String, GgufTensor> counts = new LinkedHashMap<>();
            for (GgufTensor tensor : file.tensors()) {
                String name = tensor.name();
                if (name.endsWith(SUMS)) sums.put(name.substring(0, name.length() - SUMS.length()), tensor);
                else if (name.endsWith(COUNTS)) counts.put(name.substring(0, name.length() - COUNTS.length()), tensor);
            }
            if (sums.isEmpty()) {
                throw new FsException(path + ": no NAME" + SUMS + " tensors: the file holds no importance data");
            }
            SortedMap<String, Sums> tensors = new TreeMap<>();
            for (Map.Entry<String, GgufTensor> entry : sums.entrySet()) {
                String name = entry.getKey();
                GgufTensor count = counts.remove(name);
                if (count == null) throw new FsException(path + ": " + name + SUMS + " has no " + name + COUNTS);
                float[] columnSums = columnSums(path, entry.getValue());
                long[] counted = counts(path, count, columnSums.length);
                tensors.put(name, new Sums(columnSums, counted));
            }
            if (!counts.isEmpty()) {
                String name = counts.keySet().iterator().next();
                throw new FsException(path + ": " + name + COUNTS + " has no " + name + SUMS);
            }
            return new ImportanceMatrix(tensors, datasets, chunkCount, chunkSize);
        }
    }

    private static float[] columnSums(Path path, GgufTensor tensor) {
        checkF32(path, tensor);
        float[] values = tensor.data().toArray(F32);
        for (float value : values) {
            if (!Float.isFinite(value) || value < 0) {
                throw new FsException(path + ": " + tensor.name() + " holds " + value
                        + ", not a sum of squares (finite and at least 0)");
            }
        }
        return values;
    }

    /** One count per matrix: one, or one per expert of a stack, whose sums are then that many rows of columns. */
    private static long[] counts(Path path, GgufTensor counts, int sums) {
        checkF32(path, counts);
        float[] values = counts.data().toArray(F32);
        if (values.length == 0 || sums % values.length != 0) {
            throw new FsException(path + ": " + counts.name() + " holds " + values.length + " counts for " + sums
                    + " sums: not one count per matrix (one, or one per expert)");
        }
        long[] result = new long[values.length];
        for (int i = 0; i < values.length; i++) {
            float count = values[i];
            if (!Float.isFinite(count) || count < 0) {
                throw new FsException(path + ": " + counts.name() + " holds " + count + ", not a count of tokens");
            }
            result[i] = Math.round((double) count); // llama.cpp stores the count as a float and rounds it back
        }
        return result;
    }

    private static void checkF32(Path path, GgufTensor tensor) {
        if (tensor.type() != DType.F32) {
            throw new FsException(path + ": " + tensor.name() + " is " + tensor.type()
                    + ", an importance matrix holds F32");
        }
    }

    /** Writes the matrix to {@code path} in llama.cpp's layout, replacing any file there only once it is complete. */
    public void write(Path path) {
        Map<String, GgufValue> metadata = new LinkedHashMap<>();
        metadata.put(GENERAL_TYPE, new GgufValue(GgufValueType.STRING, TYPE));
        metadata.put(DATASETS, new GgufValue(GgufValueType.ARRAY,
                new GgufArray(GgufValueType.STRING, datasets.toArray(String[]::new))));
        metadata.put(CHUNK_COUNT, new GgufValue(GgufValueType.UINT32, (long) chunkCount));
        metadata.put(CHUNK_SIZE, new GgufValue(GgufValueType.UINT32, (long) chunkSize));
        List<GgufFileWriter.TensorInfo> infos = new ArrayList<>();
        for (Map.Entry<String, Sums> entry : tensors.entrySet()) {
            Sums sums = entry.getValue();
            // ggml's ne [columns, matrices] and [1, matrices], trailing ones dropped as gguf stores them
            boolean stack = sums.matrices() > 1;
            infos.add(new GgufFileWriter.TensorInfo(entry.getKey() + SUMS, DType.F32, stack
                    ? new long[] {sums.matrices(), sums.columns()} : new long[] {sums.columns()}));
            infos.add(new GgufFileWriter.TensorInfo(entry.getKey() + COUNTS, DType.F32, stack
                    ? new long[] {sums.matrices(), 1} : new long[] {1}));
        }
        try (GgufFileWriter writer = GgufFileWriter.create(path, metadata, infos)) {
            for (Sums sums : tensors.values()) {
                writer.write(floats(sums.sumOfSquares));
                float[] counts = new float[sums.matrices()];
                for (int m = 0; m < counts.length; m++) counts[m] = sums.counts[m];
                writer.write(floats(counts));
            }
            writer.finish();
        }
    }

    private static MemorySegment floats(float[] values) {
        MemorySegment bytes = MemorySegment.ofArray(new byte[values.length * Float.BYTES]);
        for (int i = 0; i < values.length; i++) bytes.setAtIndex(F32, i, values[i]);
        return bytes;
    }
}
