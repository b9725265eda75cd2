package fs.quantize;

import fs.model.ModelConfig;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code fs quantize} will write: every tensor of the model, by its GGUF name, with its shape and the type it
 * gets, in the order llama-quantize writes them (tensors outside the layers first, then layer by layer, by name
 * within each: output_norm, token_embd, blk.0.attn_k, blk.0.attn_k_norm, …). The types follow llama.cpp's
 * llama_tensor_get_type for a dense model:
 * <ul>
 * <li>matrices (two or more dimensions, named *weight, not a norm) get the preset's type, except what the preset
 * singles out: the output projection, or the embedding when it is tied to it, in Q6_K (Q8_0 for Q8_0 and for rows
 * that are not whole blocks of the preset's type, Q5_K for IQ2_XXS); an untied embedding in Q2_K for IQ2_XXS;
 * Q4_K_M and Q5_K_M put attn_v and ffn_down of the layers use_more_bits picks (the first and last eighth, and every
 * third between) in Q6_K; Q4_K_S puts the first four attn_v and the first eighth of ffn_down in Q5_K; Q2_K puts
 * attn_v (Q4_K when four or more query heads share a kv head), ffn_down and attn_output in Q3_K; IQ2_XXS puts attn_v
 * in Q2_K (Q4_K with groups of four or more) and the first eighth of ffn_down in Q2_K;</li>
 * <li>a matrix whose rows are not whole blocks of its type falls back as llama.cpp's tensor_type_fallback does:
 * Q2_K and Q3_K to Q4_0, Q6_K to Q8_0, and to F16 when even that does not fit;</li>
 * <li>everything else (the norms, any vector) is F32.</li>
 * </ul>
 * A mixture of experts (Qwen3-MoE, llama.cpp's qwen3moe) adds llama.cpp's rules for its tensors: the router
 * (ffn_gate_inp) is never quantized and stays F32 (as convert_hf_to_gguf.py writes it); the experts' stacks
 * (ffn_gate_exps, ffn_up_exps, ffn_down_exps, [experts, out, in]) are matrices like any other, ffn_down_exps taking
 * ffn_down's rules by its layer; IQ2_XXS puts attn_v in Q4_K when there are four or more experts; and a model of
 * exactly eight experts (llama.cpp's n_expert == 8, meant for Mixtral) gets attn_v and attn_k in Q8_0 (IQ2_XXS:
 * attn_k in Q4_K) and attn_output in Q5_K for Q2_K, Q4_K_S, Q4_K_M and IQ2_XXS.
 *
 * <p>Where llama.cpp picks a type fs does not write (Q4_K's fallback Q5_0, Q5_K's Q5_1, IQ2_XXS's IQ4_NL, and Q4_1 for
 * the first eighth of ffn_down in Q4_0 with an importance matrix), fs writes Q8_0: never less precise than
 * llama.cpp's choice. The F16 and BF16 presets put every matrix in their type, as llama.cpp does (the router stays
 * F32).
 */
public record QuantizationPlan(QuantizationType type, List<Entry> tensors) {
    private static final Pattern LAYER = Pattern.compile("blk\\.(\\d+)\\..*");

    /** One tensor: {@code shape} row-major, slowest dimension first, as {@link Tensor}'s. */
    public record Entry(String name, long[] shape, DType type) {
        public Entry {
            shape = shape.clone();
        }

        @Override
        public long[] shape() {
            return shape.clone();
        }

        public long columns() {
            return shape[shape.length - 1];
        }

        public long rows() {
            long rows = 1;
            for (int d = 0; d < shape.length - 1; d++) rows = Math.multiplyExact(rows, shape[d]);
            return rows;
        }

        /** Bytes of the tensor in its planned type. */
        public long bytes() {
            return Math.multiplyExact(rows(), type.rowBytes(columns()));
        }

        /**
         * Whether llama.cpp quantizes it only with an importance matrix (tensor_requires_imatrix): IQ2_XXS, except
         * the embedding and the output projection.
         */
        public boolean needsImportance() {
            return type == DType.IQ2_XXS && !name.equals(EMBEDDING) && !name.equals(OUTPUT);
        }

        @Override
        public String toString() {
            return name + " " + type + Arrays.toString(shape);
        }
    }

    static final String EMBEDDING = "token_embd.weight";
    static final String OUTPUT = "output.weight";
    /** A mixture of experts' router, which llama.cpp never quantizes (tensor_allows_quantization). */
    static final String ROUTER = "ffn_gate_inp.weight";

    public QuantizationPlan {
        tensors = List.copyOf(tensors);
    }

    /**
     * The plan for {@code tensors} (named as GGUF names them: token_embd.weight, blk.N.attn_q.weight, …) of a model
     * with this config, in preset {@code type}; {@code withImportance} says whether an importance matrix will weigh
     * the quantization (llama.cpp's mix depends on it in one case).
     */
    public static QuantizationPlan of(QuantizationType type, ModelConfig config, List<Tensor> tensors,
            boolean withImportance) {
        boolean tied = tensors.stream().noneMatch(t -> t.name().equals(OUTPUT));
        Chooser chooser = new Chooser(type, config.numAttentionHeads() / config.numKeyValueHeads(),
                config.numHiddenLayers(), config.largestExpertCount(), tied, withImportance);
        List<Tensor> ordered = new ArrayList<>(tensors);
        ordered.sort(Comparator.comparingInt((Tensor t) -> layer(t.name())).thenComparing(Tensor::name));
        List<Entry> entries = new ArrayList<>();
        for (Tensor tensor : ordered) entries.add(new Entry(tensor.name(), tensor.shape(), chooser.choose(tensor)));
        return new QuantizationPlan(type, entries);
    }

    /** The first tensor that needs an importance matrix, if any (then quantizing without one is refused). */
    public Optional<Entry> firstNeedingImportance() {
        return tensors.stream().filter(Entry::needsImportance).findFirst();
    }

    /** Bytes of all the tensors' data. */
    public long bytes() {
        long bytes = 0;
        for (Entry entry : tensors) bytes = Math.addExact(bytes, entry.bytes());
        return bytes;
    }

    /** The layer of a blk.N.… tensor, -1 for the others (which llama.cpp orders first). */
    private static int layer(String name) {
        Matcher matcher = LAYER.matcher(name);
        return matcher.matches() ? Integer.parseInt(matcher.group(1)) : -1;
    }

    /** llama_tensor_get_type's decisions for one model and preset. */
    private record Chooser(QuantizationType preset, int gqa, int layers, int experts, boolean tied,
            boolean withImportance) {
        DType choose(Tensor tensor) {
            String name = tensor.name();
            boolean matrix = tensor.rank() >= 2 && name.endsWith("weight") && !name.contains("_norm.weight")
                    && !name.contains(ROUTER);
            if (!matrix) return DType.F32;
            DType base = preset.defaultType();
            if (!preset.isQuantized()) return base;
            long columns = tensor.columns();
            return fallback(mix(name, columns, base), columns);
        }

        private DType mix(String name, long columns, DType base) {
            int layer = layer(name);
            if (name.equals(OUTPUT) || (tied && name.equals(EMBEDDING))) {
                if (columns % base.blockElements() != 0) return DType.Q8_0;
                if (preset == QuantizationType.IQ2_XXS) return DType.Q5_K;
                return base == DType.Q8_0 ? DType.Q8_0 : DType.Q6_K;
            }
            if (name.equals(EMBEDDING)) return preset == QuantizationType.IQ2_XXS ? DType.Q2_K : base;
            boolean attnV = name.contains("attn_v.weight");
            boolean attnK = name.contains("attn_k.weight");
            boolean ffnDown = name.contains("ffn_down"); // ffn_down_exps too: llama.cpp's FFN_DOWN category
            boolean attnOutput = name.contains("attn_output.weight");
            // llama.cpp's rules for "the 8-expert model" (n_expert == 8), whatever the architecture
            boolean eightExperts = experts == 8;
            if (preset == QuantizationType.IQ2_XXS) {
                if (attnV) return gqa >= 4 || experts >= 4 ? DType.Q4_K : DType.Q2_K;
                if (attnK && eightExperts) return DType.Q4_K;
                if (ffnDown && layer < layers / 8) return DType.Q2_K;
                if (attnOutput && eightExperts) return DType.Q5_K;
                return base;
            }
            if (attnV) {
                if (eightExperts) return DType.Q8_0; // "bumping this to Q8_0 trades just ~128MB"
                return switch (preset) {
                    case Q2_K -> gqa >= 4 ? DType.Q4_K : DType.Q3_K;
                    case Q4_K_M, Q5_K_M -> useMoreBits(layer, layers) ? DType.Q6_K : base;
                    case Q4_K_S -> layer < 4 ? DType.Q5_K : base;
                    default -> base;
                };
            }
            if (attnK) return eightExperts ? DType.Q8_0 : base;
            if (ffnDown) {
                return switch (preset) {
                    case Q2_K -> DType.Q3_K;
                    case Q4_K_M, Q5_K_M -> useMoreBits(layer, layers) ? DType.Q6_K : base;
                    case Q4_K_S -> layer < layers / 8 ? DType.Q5_K : base;
                    // llama.cpp's Q4_1, which fs does not write
                    case Q4_0 -> withImportance && layer < layers / 8 ? DType.Q8_0 : base;
                    default -> base;
                };
            }
            if (attnOutput && eightExperts) {
                return switch (preset) {
                    case Q2_K, Q4_K_S, Q4_K_M -> DType.Q5_K;
                    default -> base;
                };
            }
            if (attnOutput && preset == QuantizationType.Q2_K) return DType.Q3_K;
            return base;
        }

        /** llama.cpp's choice of the layers that get more bits: the first and last eighth, and every third between. */
        private static boolean useMoreBits(int layer, int layers) {
            return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
        }

        /** tensor_type_fallback, for rows that are not whole blocks of the chosen type. */
        private static DType fallback(DType chosen, long columns) {
            if (columns % chosen.blockElements() == 0) return chosen;
            DType next = switch (chosen) {
                case Q2_K, Q3_K -> DType.Q4_0;
                default -> DType.Q8_0; // Q6_K's own fallback; Q4_K, Q5_K and IQ2_XXS's (Q5_0, Q5_1, IQ4_NL) in fs
            };
            return columns % next.blockElements() == 0 ? next : DType.F16;
        }
    }
}
