package fs.backend.opencl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import fs.format.ReferenceDequantizer;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.safetensors.SafetensorsFile;
import fs.tensor.DType;
import fs.tensor.FormatSources;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * blocks.cl on llama.cpp's own files (models/q-tied), every tensor of each block format: the dequantize and embed
 * kernels give ReferenceDequantizer's floats bit for bit, and both designs' decode matmul lands within float32
 * rounding of the float64 W·x that samples-T.safetensors holds. Each format's program is built once for the class.
 */
class BlockKernelsTest {
    /** The unit roundoff of float32. */
    private static final double U = Math.scalb(1.0, -24);

    private static DeviceQueue device;
    private static final Map<KernelDesign, Map<DType, BlockKernels>> kernels = new EnumMap<>(KernelDesign.class);
    /** The launches the decode matmul is checked with, by name. */
    private record Launch(String name, KernelDesign design, Launcher launcher) {}

    private static final List<Launch> launches = new ArrayList<>();

    @BeforeAll
    static void start() {
        device = new DeviceQueue(OpenClTestSupport.device());
        for (KernelDesign design : KernelDesign.values()) {
            Map<DType, BlockKernels> built = new EnumMap<>(DType.class);
            for (DType type : FormatSources.quantized()) {
                built.put(type, BlockKernels.build(device.device, design, type, device::kernel));
            }
            kernels.put(design, built);
        }
        ClKernel gpuDecode = kernels.get(KernelDesign.GPU).get(DType.Q4_K).matmulDecode();
        int group = Integer.highestOneBit((int) Math.min(256, gpuDecode.maxWorkGroupSize(device.device.deviceId)));
        launches.add(new Launch("GPU", KernelDesign.GPU, new GpuLauncher(device.queue, group)));
        // q-tied's rows have at most 24 pieces, fewer than a decode work-group of 32: groups of 8 make each work-item
        // take several
        launches.add(new Launch("GPU in groups of 8", KernelDesign.GPU, new GpuLauncher(device.queue, 8)));
        launches.add(new Launch("CPU", KernelDesign.CPU, new CpuLauncher(device.queue)));
    }

    @AfterAll
    static void stop() {
        kernels.clear();
        launches.clear();
        device.close();
    }

    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#quantized")
    void dequantizeGivesTheReferenceFloatsBitForBit(DType type) {
        BlockKernels blocks = kernels.get(KernelDesign.CPU).get(type);
        try (GgufFile gguf = GgufFile.open(QTied.gguf(QTied.fileHolding(type)))) {
            for (GgufTensor tensor : tensorsOf(gguf, type)) {
                int rows = (int) tensor.rows();
                int columns = (int) tensor.columns();
                ClMemory out = device.floats((long) rows * columns);
                blocks.dequantize(device.queue, device.upload(tensor.data()), columns, 0, rows, out);
                assertArrayEquals(bits(reference(tensor)), bits(device.read(out, rows * columns)), tensor.name());
            }
        }
    }

    /** A panel of rows from inside a tensor, and the embedding of rows in any order, are those rows exactly. */
    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#quantized")
    void aPanelAndEmbeddedRowsAreTheReferenceRows(DType type) {
        BlockKernels blocks = kernels.get(KernelDesign.CPU).get(type);
        try (GgufFile gguf = GgufFile.open(QTied.gguf(QTied.fileHolding(type)))) {
            GgufTensor tensor = tensorsOf(gguf, type).getFirst();
            int rows = (int) tensor.rows();
            int columns = (int) tensor.columns();
            float[] expected = reference(tensor);
            ClMemory w = device.upload(tensor.data());
            int first = rows / 3;
            ClMemory panel = device.floats(2L * columns);
            blocks.dequantize(device.queue, w, columns, first, 2, panel);
            assertArrayEquals(bits(rowsOf(expected, columns, first, first + 1)), bits(device.read(panel, 2 * columns)),
                    tensor.name() + " rows " + first + ".." + (first + 1));
            int[] tokens = {rows - 1, 0, first};
            ClMemory embedded = device.floats((long) tokens.length * columns);
            blocks.embed(device.queue, w, device.upload(tokens), tokens.length, columns, embedded);
            assertArrayEquals(bits(rowsOf(expected, columns, tokens)), bits(device.read(embedded, tokens.length * columns)),
                    tensor.name() + " embed " + Arrays.toString(tokens));
        }
    }

    /**
     * Any order of summing K float32 products of exact weights and inputs is within γ_K = K·u / (1 − K·u) of
     * Σ|w_j·x_j| of the exact sum (Higham, Accuracy and Stability of Numerical Algorithms, 3.1); a weight decoded
     * wrong, or a block read twice or not at all, is off by far more.
     */
    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#quantized")
    void bothDesignsDecodeMatmulIsWithinFloat32RoundingOfTheFloat64Product(DType type) {
        String file = QTied.fileHolding(type);
        try (GgufFile gguf = GgufFile.open(QTied.gguf(file));
                SafetensorsFile samples = SafetensorsFile.open(QTied.samples(file))) {
            for (GgufTensor tensor : tensorsOf(gguf, type)) {
                int rows = (int) tensor.rows();
                int columns = (int) tensor.columns();
                QTied.Sample sample = QTied.Sample.of(samples, tensor.name());
                float[] weights = reference(tensor);
                double gamma = columns * U / (1 - columns * U);
                ClMemory w = device.upload(tensor.data());
                ClMemory x = device.upload(sample.x());
                for (Launch launch : launches) {
                    ClMemory out = device.floats(rows);
                    launch.launcher().matmulDecode(kernels.get(launch.design()).get(type).matmulDecode(),
                            KernelConstants.PIECE, x, w, out, columns, rows);
                    float[] actual = device.read(out, rows);
                    for (int n = 0; n < rows; n++) {
                        double magnitude = 0;
                        for (int j = 0; j < columns; j++) {
                            magnitude += Math.abs((double) weights[n * columns + j] * sample.x()[j]);
                        }
                        double error = Math.abs(actual[n] - sample.matvec()[n]);
                        if (error > gamma * magnitude) {
                            fail(launch.name() + " " + tensor.name() + " row " + n + ": " + actual[n] + " vs "
                                    + sample.matvec()[n] + ", error " + error + " > " + gamma * magnitude);
                        }
                    }
                }
            }
        }
    }

    private static List<GgufTensor> tensorsOf(GgufFile gguf, DType type) {
        List<GgufTensor> tensors = gguf.tensors().stream().filter(t -> t.type() == type).toList();
        assertFalse(tensors.isEmpty(), "no " + type + " tensor in " + gguf.path());
        return tensors;
    }

    private static float[] reference(GgufTensor tensor) {
        float[] values = new float[Math.toIntExact(tensor.rows() * tensor.columns())];
        ReferenceDequantizer.decode(tensor.type(), tensor.data(), values);
        return values;
    }

    /** Rows {@code ids} of a row-major matrix, back to back. */
    private static float[] rowsOf(float[] matrix, int columns, int... ids) {
        float[] rows = new float[ids.length * columns];
        for (int r = 0; r < ids.length; r++) System.arraycopy(matrix, ids[r] * columns, rows, r * columns, columns);
        return rows;
    }

    private static int[] bits(float[] values) {
        int[] bits = new int[values.length];
        for (int i = 0; i < values.length; i++) bits[i] = Float.floatToRawIntBits(values[i]);
        return bits;
    }
}
