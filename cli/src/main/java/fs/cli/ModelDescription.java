package fs.cli;

import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.GgufValue;
import fs.model.ModelConfig;
import fs.server.ModelDetails;
import fs.source.GgufSource;
import fs.source.HuggingFaceSource;
import fs.source.ModelSource;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * A model named as llama.cpp names it (llama_model_desc, llama-bench's model column and "model_type"): architecture,
 * size label and file type, e.g. "qwen3 0.6B Q4_K - Medium".
 */
final class ModelDescription {
    /** GGUF's key for llama.cpp's file type (llama_ftype), the type most matrices of the file are stored in. */
    static final String FILE_TYPE = "general.file_type";
    private static final String GUESSED = "(guessed) ";

    private ModelDescription() {}

    /** "qwen3 0.6B Q4_K - Medium", "qwen3moe 30B.A3B Q4_K - Medium" for the model {@code source} holds. */
    static String of(ModelSource source) {
        return source.config().architecture().ggufName() + " " + sizeLabel(source.config(), parameters(source)) + " "
                + fileType(source);
    }

    /** What fs serve says of the model it serves (Ollama's /api/tags and /api/show describe it). */
    static ModelDetails details(ModelSource source) {
        long bytes = source.tensors().tensors().stream().mapToLong(t -> t.data().byteSize()).sum();
        Instant modified;
        try {
            modified = Files.getLastModifiedTime(source.path()).toInstant();
        } catch (IOException e) {
            modified = Instant.now(); // it was just read: gone since, it was at least there until now
        }
        long parameters = parameters(source);
        return new ModelDetails(source instanceof GgufSource ? "gguf" : "safetensors",
                source.config().architecture().ggufName(), parameters, sizeLabel(source.config(), parameters),
                fileType(source), bytes, modified);
    }

    /** Elements of every stored tensor, as llama_model_n_params counts them. */
    static long parameters(ModelSource source) {
        return source.tensors().tensors().stream().mapToLong(Tensor::elementCount).sum();
    }

    /**
     * llama.cpp's size label of a Qwen3 or Qwen3-MoE model (its table of the released shapes, by layers and width);
     * for another shape, the label its converter writes as general.size_label from the parameter count: "9.4M",
     * "596M", "2.0B".
     */
    static String sizeLabel(ModelConfig config, long parameters) {
        int hidden = config.hiddenSize();
        if (config.largestExpertCount() > 0) { // llama.cpp's qwen3moe types, by layers
            return switch (config.numHiddenLayers()) {
                case 48 -> "30B.A3B";
                case 94 -> "235B.A22B";
                default -> countLabel(parameters);
            };
        }
        return switch (config.numHiddenLayers()) {
            case 28 -> hidden == 1024 ? "0.6B" : "1.7B";
            case 36 -> hidden == 2560 ? "4B" : "8B";
            case 40 -> "14B";
            case 64 -> "32B";
            default -> countLabel(parameters);
        };
    }

    /** Two significant digits at least, in K, M, B or T (gguf-py's model_weight_count_rounded_notation). */
    static String countLabel(long parameters) {
        double scaled;
        String suffix;
        if (parameters > 1e12) {
            scaled = parameters * 1e-12;
            suffix = "T";
        } else if (parameters > 1e9) {
            scaled = parameters * 1e-9;
            suffix = "B";
        } else if (parameters > 1e6) {
            scaled = parameters * 1e-6;
            suffix = "M";
        } else {
            scaled = parameters * 1e-3;
            suffix = "K";
        }
        String whole = Long.toString(Math.round(scaled)).replaceFirst("^0+", "");
        int decimals = Math.max(2 - whole.length(), 0);
        return String.format(Locale.ROOT, "%." + decimals + "f%s", scaled, suffix);
    }

    /**
     * The file type's name: a GGUF file's general.file_type, or llama.cpp's guess from its most common tensor type
     * when the key is absent; a Hugging Face checkpoint's dtype ("BF16").
     */
    static String fileType(ModelSource source) {
        return switch (source) {
            case GgufSource gguf -> fileType(gguf.file());
            case HuggingFaceSource directory -> switch (directory.config().torchDtype()) {
                case "bfloat16" -> fileTypeName(32);
                case "float16" -> fileTypeName(1);
                case "float32" -> fileTypeName(0);
                default -> directory.config().torchDtype();
            };
        };
    }

    /** A GGUF file's general.file_type by name, or llama.cpp's guess with its "(guessed) " when the key is absent. */
    static String fileType(GgufFile file) {
        GgufValue stored = file.metadata().get(FILE_TYPE).orElse(null);
        if (stored != null && stored.value() instanceof Long number) return fileTypeName(number);
        // llama.cpp's guess: the type of the most tensors (the first to get there), as a "mostly" file type
        Map<DType, Integer> counts = new EnumMap<>(DType.class);
        DType most = DType.F32;
        for (GgufTensor tensor : file.tensors()) {
            int count = counts.merge(tensor.type(), 1, Integer::sum);
            if (count > counts.getOrDefault(most, 0)) most = tensor.type();
        }
        // Exhaustive, so that a format added to DType gets its file type here rather than llama.cpp's "all F32".
        long guess = switch (most) {
            case F32 -> 0;
            case F16 -> 1;
            case BF16 -> 32;
            case Q4_0 -> 2;
            case Q8_0 -> 7;
            case Q2_K -> 10;
            case Q3_K -> 12;
            case Q4_K -> 15;
            case Q5_K -> 17;
            case Q6_K -> 18;
            case IQ2_XXS -> 19;
            // No GGUF tensor has these (the reader refuses ggml's I8..F64 by name): llama.cpp's guess for a type it
            // has no file type for.
            case F64, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, F8_E4M3, F8_E5M2 -> 0;
        };
        return GUESSED + fileTypeName(guess);
    }

    /** llama.cpp's name of a file type (llama_ftype_name): 15 is "Q4_K - Medium". */
    static String fileTypeName(long fileType) {
        return switch ((int) Math.min(fileType, Integer.MAX_VALUE)) {
            case 0 -> "all F32";
            case 1 -> "F16";
            case 2 -> "Q4_0";
            case 3 -> "Q4_1";
            case 7 -> "Q8_0";
            case 8 -> "Q5_0";
            case 9 -> "Q5_1";
            case 10 -> "Q2_K - Medium";
            case 11 -> "Q3_K - Small";
            case 12 -> "Q3_K - Medium";
            case 13 -> "Q3_K - Large";
            case 14 -> "Q4_K - Small";
            case 15 -> "Q4_K - Medium";
            case 16 -> "Q5_K - Small";
            case 17 -> "Q5_K - Medium";
            case 18 -> "Q6_K";
            case 19 -> "IQ2_XXS - 2.0625 bpw";
            case 20 -> "IQ2_XS - 2.3125 bpw";
            case 21 -> "Q2_K - Small";
            case 22 -> "IQ3_XS - 3.3 bpw";
            case 23 -> "IQ3_XXS - 3.0625 bpw";
            case 24 -> "IQ1_S - 1.5625 bpw";
            case 25 -> "IQ4_NL - 4.5 bpw";
            case 26 -> "IQ3_S - 3.4375 bpw";
            case 27 -> "IQ3_S mix - 3.66 bpw";
            case 28 -> "IQ2_S - 2.5 bpw";
            case 29 -> "IQ2_M - 2.7 bpw";
            case 30 -> "IQ4_XS - 4.25 bpw";
            case 31 -> "IQ1_M - 1.75 bpw";
            case 32 -> "BF16";
            case 36 -> "TQ1_0 - 1.69 bpw ternary";
            case 37 -> "TQ2_0 - 2.06 bpw ternary";
            case 38 -> "MXFP4 MoE";
            case 39 -> "NVFP4";
            case 40 -> "Q1_0";
            case 41 -> "Q2_0";
            default -> "unknown, may not work";
        };
    }
}
