package fs.gguf;

import fs.safetensors.SafetensorsFile;
import fs.tensor.DType;
import fs.tensor.FormatSources;
import fs.tensor.Tensor;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.List;

/**
 * models/q-tied: one Qwen3 checkpoint as llama.cpp wrote it in every GGUF type fs reads, with samples-T.safetensors
 * holding, per tensor, some rows as llama.cpp's reference decoder dequantizes them and W·x over all rows in float64.
 */
public final class QTied {
    /** The file types, as the file names spell them. */
    public static final List<String> TYPES =
            List.of("BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "Q2_K", "IQ2_XXS");

    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private QTied() {}

    public static Path dir() {
        return Path.of(System.getProperty("fs.repo"), "models", "q-tied");
    }

    public static Path gguf(String type) {
        return dir().resolve("model-" + type + ".gguf");
    }

    public static Path samples(String type) {
        return dir().resolve("samples-" + type + ".safetensors");
    }

    /**
     * The file type whose matrices are stored as {@code type}: the file of the format's own name, but the K-quants'
     * medium presets (Q4_K_M, Q5_K_M) and, for Q3_K, the Q2_K preset, which stores several matrices in it.
     */
    public static String fileHolding(DType type) {
        return switch (type) {
            case Q3_K -> "Q2_K";
            case Q4_K, Q5_K -> type + "_M";
            default -> type.name();
        };
    }

    /** The file types that hold every quantized format among them, each once. */
    public static List<String> quantizedFiles() {
        return FormatSources.quantized().stream().map(QTied::fileHolding).distinct().toList();
    }

    /** One tensor's references: its ggml type id, the sampled row ids, those rows, and W·x for every row. */
    public record Sample(long typeId, long[] rowIds, float[][] rows, double[] matvec, float[] x) {
        public static Sample of(SafetensorsFile samples, String tensor) {
            long typeId = samples.tensor(tensor + ".type").orElseThrow().data().get(I64, 0);
            long[] rowIds = longs(samples.tensor(tensor + ".row_ids").orElseThrow());
            Tensor rows = samples.tensor(tensor + ".rows").orElseThrow();
            int columns = (int) rows.dim(1);
            float[][] values = new float[rowIds.length][columns];
            for (int r = 0; r < rowIds.length; r++) {
                for (int c = 0; c < columns; c++) values[r][c] = rows.data().getAtIndex(F32, (long) r * columns + c);
            }
            Tensor matvec = samples.tensor(tensor + ".matvec").orElseThrow();
            double[] products = new double[(int) matvec.dim(0)];
            for (int i = 0; i < products.length; i++) products[i] = matvec.data().getAtIndex(F64, i);
            Tensor xTensor = samples.tensor("x." + columns).orElseThrow();
            float[] x = new float[columns];
            for (int c = 0; c < columns; c++) x[c] = xTensor.data().getAtIndex(F32, c);
            return new Sample(typeId, rowIds, values, products, x);
        }

        private static long[] longs(Tensor tensor) {
            long[] values = new long[(int) tensor.dim(0)];
            for (int i = 0; i < values.length; i++) values[i] = tensor.data().getAtIndex(I64, i);
            return values;
        }
    }
}
