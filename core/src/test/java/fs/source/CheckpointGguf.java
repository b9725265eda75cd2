package fs.source;

import com.fasterxml.jackson.databind.ObjectMapper;
import fs.gguf.GgufValueType;
import fs.gguf.GgufWriter;
import fs.model.ModelConfig;
import fs.model.TensorNaming;
import fs.model.TensorRole;
import fs.safetensors.Checkpoint;
import fs.tensor.DType;
import fs.tensor.Tensor;
import fs.tokenizer.Tokenizer;
import fs.tokenizer.TokenizerGguf;
import java.io.ByteArrayOutputStream;
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
 * with <|endoftext|> as the eos, which llama.cpp then appends to every text. {@link #writeReranker} writes a
 * Qwen3-Reranker as llama.cpp's converter does (Qwen3Model with is_rerank).
 */
public final class CheckpointGguf {
    private CheckpointGguf() {}

    /** llama.cpp's LLAMA_POOLING_TYPE_LAST and LLAMA_POOLING_TYPE_RANK. */
    private static final int POOLING_LAST = 3;
    private static final int POOLING_RANK = 4;
    /** The classifier head's rows as llama.cpp's converter stacks them: the lm_head's "yes" row, then its "no" row. */
    private static final List<String> RERANK_LABELS = List.of("yes", "no");
    /** The template convert_hf_to_gguf.py stores as tokenizer.chat_template.rerank, the card's prompt. */
    private static final String RERANK_TEMPLATE = "<|im_start|>system\nJudge whether the Document meets the"
            + " requirements based on the Query and the Instruct provided. Note that the answer can only be \"yes\" or"
            + " \"no\".<|im_end|>\n<|im_start|>user\n<Instruct>: Given a web search query, retrieve relevant passages"
            + " that answer the query\n<Query>: {query}\n<Document>: {document}<|im_end|>\n<|im_start|>assistant\n"
            + "<think>\n\n</think>\n\n";

    public static Path write(Path checkpointDir, Path file) {
        return write(checkpointDir, file, false, 0);
    }

    /**
     * A Qwen3-Reranker checkpoint (a Qwen3ForCausalLM) as llama.cpp's converter writes it: qwen3.pooling_type 4
     * (rank), qwen3.classifier.output_labels ["yes", "no"], the rerank chat template, and of the output projection (the
     * embedding when tied, which stays as token_embd; lm_head otherwise, then not written as output.weight) only the
     * "yes" and "no" rows, in that order, as cls.output.weight. {@code headRows} other than 2 makes a file fs refuses:
     * 0 leaves cls.output.weight out, more repeats the two rows.
     */
    public static Path writeReranker(Path checkpointDir, Path file, int headRows) {
        return write(checkpointDir, file, true, headRows);
    }

    private static Path write(Path checkpointDir, Path file, boolean reranker, int headRows) {
        ModelConfig config = ModelConfig.read(checkpointDir.resolve("config.json"));
        GgufWriter writer = new GgufWriter();
        try (Checkpoint checkpoint = Checkpoint.open(checkpointDir)) {
            TensorNaming from = TensorNaming.ofCheckpoint(name -> checkpoint.tensors().stream()
                    .anyMatch(t -> t.name().equals(name)));
            metadata(writer, checkpointDir, config, from.headless());
            if (reranker) {
                writer.u32("qwen3.pooling_type", POOLING_RANK)
                        .array("qwen3.classifier.output_labels", GgufValueType.STRING, RERANK_LABELS.toArray())
                        .string("tokenizer.chat_template.rerank", RERANK_TEMPLATE)
                        .array("tokenizer.chat_templates", GgufValueType.STRING, "rerank");
            }
            tensors(writer, checkpoint, config, from, reranker);
            if (headRows > 0) rerankHead(writer, checkpointDir, checkpoint, config, from, headRows);
        }
        return writer.write(file);
    }

    /** The output projection's rows of "yes" and "no", repeated to {@code rows} rows, as cls.output.weight. */
    private static void rerankHead(GgufWriter writer, Path checkpointDir, Checkpoint checkpoint, ModelConfig config,
                                   TensorNaming from, int rows) {
        Tokenizer tokenizer = Tokenizer.load(checkpointDir);
        Tensor output = checkpoint.tensor(config.tieWordEmbeddings() ? from.embedding() : from.output());
        long rowBytes = output.byteSize() / output.dim(0);
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        for (int r = 0; r < rows; r++) {
            int id = tokenizer.tokenId(RERANK_LABELS.get(r % 2)).orElseThrow();
            head.writeBytes(output.data().asSlice(id * rowBytes, rowBytes).toArray(ValueLayout.JAVA_BYTE));
        }
        writer.tensor("cls.output.weight", DType.BF16, new long[] {config.hiddenSize(), rows}, head.toByteArray());
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

    /** A reranker's lm_head becomes its classifier head: it is not written as output.weight. */
    private static void tensors(GgufWriter writer, Checkpoint checkpoint, ModelConfig config, TensorNaming from,
                                boolean reranker) {
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
        if (!config.tieWordEmbeddings() && !from.headless() && !reranker) {
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
