package fs.source;

import com.fasterxml.jackson.databind.ObjectMapper;
import fs.gguf.GgufWriter;
import fs.model.ModelConfig;
import fs.model.TensorNaming;
import fs.model.TensorRole;
import fs.safetensors.Checkpoint;
import fs.tensor.DType;
import fs.tensor.Tensor;
import fs.tokenizer.TokenizerGguf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a bf16 Hugging Face checkpoint as the GGUF file tools/reference/to_gguf.py (and llama.cpp's converter) would
 * make of it: the qwen3.* and tokenizer.ggml.* metadata, the chat template, matrices with their bf16 bytes, 1-D norm
 * weights widened to F32, no output.weight when tied. An embedding model (a bare Qwen3Model, as Qwen3-Embedding ships)
 * gets what llama.cpp's GGUFs of Qwen3-Embedding carry: qwen3.pooling_type 3 (last) and tokenizer.ggml.add_eos_token
 * with <|endoftext|> as the eos, which llama.cpp then appends to every text.
 */
public final class CheckpointGguf {
    private CheckpointGguf() {}

    /** llama.cpp's LLAMA_POOLING_TYPE_LAST. */
    private static final int POOLING_LAST = 3;

    public static Path write(Path checkpointDir, Path file) {
        ModelConfig config = ModelConfig.read(checkpointDir.resolve("config.json"));
        GgufWriter writer = new GgufWriter();
        try (Checkpoint checkpoint = Checkpoint.open(checkpointDir)) {
            TensorNaming from = TensorNaming.ofCheckpoint(name -> checkpoint.tensors().stream()
                    .anyMatch(t -> t.name().equals(name)));
            metadata(writer, checkpointDir, config, from.headless());
            tensors(writer, checkpoint, config, from);
        }
        return writer.write(file);
    }

    private static void metadata(GgufWriter writer, Path checkpointDir, ModelConfig config, boolean embedding) {
        writer.string("general.architecture", "qwen3")
                .u32("qwen3.block_count", config.numHiddenLayers())
                .u32("qwen3.context_length", config.maxPositionEmbeddings())
                .u32("qwen3.embedding_length", config.hiddenSize())
                .u32("qwen3.feed_forward_length", config.feedForward(0).width())
                .u32("qwen3.attention.head_count", config.numAttentionHeads())
                .u32("qwen3.attention.head_count_kv", config.numKeyValueHeads())
                .u32("qwen3.attention.key_length", config.headDim())
                .u32("qwen3.attention.value_length", config.headDim())
                .f32("qwen3.attention.layer_norm_rms_epsilon", config.rmsNormEps())
                .f32("qwen3.rope.freq_base", config.ropeTheta());
        TokenizerGguf.keys(checkpointDir.resolve("tokenizer.json"), config.vocabSize()).values()
                .forEach(key -> key.accept(writer));
        writer.u32("tokenizer.ggml.bos_token_id", config.bosTokenId())
                // Qwen3's bos id is <|endoftext|>'s
                .u32("tokenizer.ggml.eos_token_id", embedding ? config.bosTokenId() : config.eosTokenIds().getFirst())
                .string("tokenizer.chat_template", chatTemplate(checkpointDir));
        if (embedding) {
            writer.u32("qwen3.pooling_type", POOLING_LAST).bool("tokenizer.ggml.add_eos_token", true);
        }
    }

    private static void tensors(GgufWriter writer, Checkpoint checkpoint, ModelConfig config, TensorNaming from) {
        List<String[]> names = new ArrayList<>();
        names.add(new String[] {from.embedding(), TensorNaming.GGUF.embedding()});
        for (int layer = 0; layer < config.numHiddenLayers(); layer++) {
            for (TensorRole role : List.of(TensorRole.ATTN_NORM, TensorRole.Q, TensorRole.K, TensorRole.V,
                    TensorRole.O, TensorRole.Q_NORM, TensorRole.K_NORM, TensorRole.FFN_NORM, TensorRole.GATE,
                    TensorRole.UP, TensorRole.DOWN)) {
                names.add(new String[] {from.layer(layer, role), TensorNaming.GGUF.layer(layer, role)});
            }
        }
        names.add(new String[] {from.norm(), TensorNaming.GGUF.norm()});
        if (!config.tieWordEmbeddings() && !from.headless()) {
            names.add(new String[] {from.output(), TensorNaming.GGUF.output()});
        }
        for (String[] name : names) {
            Tensor tensor = checkpoint.tensor(name[0]);
            long[] dims = new long[tensor.rank()];
            for (int i = 0; i < dims.length; i++) dims[i] = tensor.dim(dims.length - 1 - i);
            byte[] bf16 = tensor.data().toArray(ValueLayout.JAVA_BYTE);
            if (tensor.rank() == 2) {
                writer.tensor(name[1], DType.BF16, dims, bf16);
            } else {
                writer.tensor(name[1], DType.F32, dims, widened(bf16));
            }
        }
    }

    /** bf16 is the top half of a float32: widening is exact. */
    private static byte[] widened(byte[] bf16) {
        ByteBuffer in = ByteBuffer.wrap(bf16).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer out = ByteBuffer.allocate(bf16.length * 2).order(ByteOrder.LITTLE_ENDIAN);
        while (in.hasRemaining()) out.putInt((in.getShort() & 0xFFFF) << 16);
        return out.array();
    }

    private static String chatTemplate(Path checkpointDir) {
        try {
            return new ObjectMapper().readTree(checkpointDir.resolve("tokenizer_config.json").toFile())
                    .get("chat_template").textValue();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
