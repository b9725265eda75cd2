package fs.quantize;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.model.Probe;
import fs.model.ModelConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Collects an importance matrix from forward passes, as llama-imatrix does: for every matrix multiplication of the
 * layers, each input column's sum of squared activations and the number of input rows (tokens). It reads the
 * activations the forward pass reports to its {@link Probe}: attn_norm is the input of attn_q, attn_k and attn_v,
 * attention of attn_output, ffn_norm of ffn_gate and ffn_up, silu_mul of ffn_down. Like llama-imatrix it leaves out
 * the embedding (a row lookup, not a multiplication) and the output projection (llama-imatrix collects it only with
 * --process-output). Sums are kept in double and stored as float. The thread that runs the forward calls it.
 */
public final class ImportanceMatrixCollector implements Probe {
    /** The probe's ops whose outputs enter matrices, and those matrices (their GGUF names after blk.N.). */
    private static final Map<String, List<String>> INPUT_OF = Map.of(
            "attn_norm", List.of("attn_q.weight", "attn_k.weight", "attn_v.weight"),
            "attention", List.of("attn_output.weight"),
            "ffn_norm", List.of("ffn_gate.weight", "ffn_up.weight"),
            "silu_mul", List.of("ffn_down.weight"));

    private final Backend backend;
    private final ModelConfig config;
    /** Per op and layer ("attn_norm 3"), the running sums and their row count. */
    private final Map<String, Accumulator> accumulators = new HashMap<>();
    private final Map<Long, float[]> scratch = new HashMap<>();
    private int windows;

    private static final class Accumulator {
        final String op;
        final int layer;
        final double[] sums;
        long rows;

        Accumulator(String op, int layer, int width) {
            this.op = op;
            this.layer = layer;
            this.sums = new double[width];
        }
    }

    public ImportanceMatrixCollector(Backend backend, ModelConfig config) {
        this.backend = backend;
        this.config = config;
    }

    @Override
    public void after(String op, int layer, Buffer output, long length) {
        if (layer < 0) return;
        Integer width = switch (op) {
            case "attn_norm", "ffn_norm" -> config.hiddenSize();
            case "attention" -> config.queryDim();
            case "silu_mul" -> config.feedForward(layer).width();
            default -> null;
        };
        if (width == null) return;
        float[] values = scratch.computeIfAbsent(length, n -> new float[Math.toIntExact(n)]);
        backend.read(output, 0, values);
        Accumulator accumulator =
                accumulators.computeIfAbsent(op + " " + layer, k -> new Accumulator(op, layer, width));
        int rows = Math.toIntExact(length / width);
        double[] sums = accumulator.sums;
        for (int r = 0; r < rows; r++) {
            int at = r * width;
            for (int c = 0; c < width; c++) {
                double x = values[at + c];
                sums[c] += x * x;
            }
        }
        accumulator.rows += rows;
    }

    /** One window of the text is done (llama-imatrix's chunk). */
    public void endWindow() {
        windows++;
    }

    /** The matrix collected so far, naming {@code datasets} as its texts, from windows of {@code windowTokens}. */
    public ImportanceMatrix matrix(List<String> datasets, int windowTokens) {
        TreeMap<String, ImportanceMatrix.Sums> tensors = new TreeMap<>();
        for (Accumulator accumulator : accumulators.values()) {
            float[] sums = new float[accumulator.sums.length];
            for (int c = 0; c < sums.length; c++) sums[c] = (float) accumulator.sums[c];
            for (String matrix : INPUT_OF.get(accumulator.op)) {
                tensors.put("blk." + accumulator.layer + "." + matrix,
                        new ImportanceMatrix.Sums(sums, accumulator.rows));
            }
        }
        return new ImportanceMatrix(tensors, datasets, windows, windowTokens);
    }
}
