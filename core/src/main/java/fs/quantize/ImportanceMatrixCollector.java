package fs.quantize;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.ExpertRouting;
import fs.model.FeedForward;
import fs.model.ModelConfig;
import fs.model.Probe;
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
 *
 * <p>A mixture-of-experts layer, as llama-imatrix's MUL_MAT_ID does: ffn_norm is the input of the router
 * (ffn_gate_inp, every row) and of ffn_gate_exps and ffn_up_exps, whose entries are per expert, each expert summing
 * only the rows of the tokens that chose it ({@link Probe#routed}); expert_silu_mul holds a row per slot (token,
 * chosen expert), the input of ffn_down_exps, summed under the slot's expert. An expert's count is the rows it saw,
 * so a stack's counts add up to tokens × experts used.
 */
public final class ImportanceMatrixCollector implements Probe {
    /** The probe's ops whose outputs enter matrices, and those matrices (their GGUF names after blk.N.). */
    private static final Map<String, List<String>> INPUT_OF = Map.of(
            "attn_norm", List.of("attn_q.weight", "attn_k.weight", "attn_v.weight"),
            "attention", List.of("attn_output.weight"),
            "ffn_norm", List.of("ffn_gate.weight", "ffn_up.weight"),
            "silu_mul", List.of("ffn_down.weight"),
            "router", List.of("ffn_gate_inp.weight"),
            "experts_in", List.of("ffn_gate_exps.weight", "ffn_up_exps.weight"),
            "expert_silu_mul", List.of("ffn_down_exps.weight"));

    private final ModelConfig config;
    /** Per op and layer ("attn_norm 3"), the running sums and their row counts. */
    private final Map<String, Accumulator> accumulators = new HashMap<>();
    private final Map<Long, float[]> scratch = new HashMap<>();
    /** An MoE layer's ffn_norm output, kept until its routing says which experts each row goes to. */
    private float[] pendingExpertInput;
    private int pendingLayer = -1;
    /** The routing of the MoE layer running now, for its expert_silu_mul. */
    private ExpertRouting routing;
    private int routingLayer = -1;
    private int windows;

    private static final class Accumulator {
        final String op;
        final int layer;
        final int width;
        final double[] sums;
        final long[] rows;

        Accumulator(String op, int layer, int width, int matrices) {
            this.op = op;
            this.layer = layer;
            this.width = width;
            this.sums = new double[width * matrices];
            this.rows = new long[matrices];
        }

        /** Adds row {@code row} of {@code values} to matrix {@code matrix}'s sums. */
        void add(float[] values, int row, int matrix) {
            int at = row * width;
            int base = matrix * width;
            for (int c = 0; c < width; c++) {
                double x = values[at + c];
                sums[base + c] += x * x;
            }
            rows[matrix]++;
        }
    }

    public ImportanceMatrixCollector(ModelConfig config) {
        this.config = config;
    }

    @Override
    public void after(String op, int layer, Backend backend, Buffer output, long length) {
        if (layer < 0) return;
        FeedForward feedForward = config.feedForward(layer);
        boolean experts = feedForward instanceof FeedForward.Experts;
        Integer width = switch (op) {
            case "attn_norm", "ffn_norm" -> config.hiddenSize();
            case "attention" -> config.queryDim();
            case "silu_mul", "expert_silu_mul" -> feedForward.width();
            default -> null;
        };
        if (width == null) return;
        float[] values = read(backend, output, length);
        int rows = Math.toIntExact(length / width);
        if (op.equals("expert_silu_mul")) {
            if (routing == null || routingLayer != layer || routing.slots() != rows) {
                throw new IllegalStateException("layer " + layer + "'s expert inputs came without their routing");
            }
            Accumulator accumulator = accumulator(op, layer, width, routing.expertCount());
            for (int slot = 0; slot < rows; slot++) accumulator.add(values, slot, routing.expert(slot));
            return;
        }
        boolean expertInput = experts && op.equals("ffn_norm");
        Accumulator accumulator = accumulator(expertInput ? "router" : op, layer, width, 1);
        for (int r = 0; r < rows; r++) accumulator.add(values, r, 0);
        if (expertInput) { // the experts' share waits for the routing
            pendingExpertInput = values.clone();
            pendingLayer = layer;
        }
    }

    @Override
    public void routed(int layer, ExpertRouting routing) {
        this.routing = routing;
        this.routingLayer = layer;
        if (pendingExpertInput == null || pendingLayer != layer) {
            throw new IllegalStateException("layer " + layer + " was routed before its ffn_norm");
        }
        int width = config.hiddenSize();
        Accumulator accumulator = accumulator("experts_in", layer, width, routing.expertCount());
        for (int slot = 0; slot < routing.slots(); slot++) {
            accumulator.add(pendingExpertInput, slot / routing.used(), routing.expert(slot));
        }
        pendingExpertInput = null;
        pendingLayer = -1;
    }

    private float[] read(Backend backend, Buffer output, long length) {
        float[] values = scratch.computeIfAbsent(length, n -> new float[Math.toIntExact(n)]);
        backend.read(output, 0, values);
        return values;
    }

    private Accumulator accumulator(String op, int layer, int width, int matrices) {
        return accumulators.computeIfAbsent(op + " " + layer, k -> new Accumulator(op, layer, width, matrices));
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
