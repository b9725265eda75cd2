package fs.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.gguf.QTied;
import fs.safetensors.Checkpoint;
import fs.safetensors.SafetensorsWriter;
import fs.source.ModelSource;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelWeightsTest {
    private static final ValueLayout.OfShort HALF = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @TempDir
    Path dir;

    private static float firstValue(Tensor bf16) {
        return Float.intBitsToFloat(bf16.data().get(HALF, 0) << 16);
    }

    private static ModelTensors tensors(Checkpoint checkpoint) {
        return new ModelTensors(checkpoint.directory(), TensorNaming.HUGGING_FACE, checkpoint.tensors());
    }

    private static ModelConfig config(Path model) {
        return ModelConfig.read(model.resolve("config.json"));
    }

    @Test
    void bindsEveryWeightOfATiedCheckpointWithoutLmHead() {
        Path model = TinyQwen3.writeTied(dir);
        try (Checkpoint checkpoint = Checkpoint.open(model)) {
            ModelWeights weights = ModelWeights.bind(config(model), tensors(checkpoint));
            assertSame(checkpoint.tensor("model.embed_tokens.weight"), weights.embedTokens());
            assertSame(weights.embedTokens(), weights.lmHead());
            assertSame(checkpoint.tensor("model.norm.weight"), weights.norm());
            assertEquals(TinyQwen3.LAYERS, weights.layers().size());
            ModelWeights.Layer last = weights.layers().get(TinyQwen3.LAYERS - 1);
            String p = "model.layers." + (TinyQwen3.LAYERS - 1) + ".";
            ModelWeights.Attention a = last.attention();
            ModelWeights.Dense f = (ModelWeights.Dense) last.feedForward();
            List<Tensor> bound = List.of(a.norm(), a.q(), a.k(), a.v(), a.o(), a.qNorm(), a.kNorm(), last.ffnNorm(),
                    f.gate(), f.up(), f.down());
            List<String> names = List.of("input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                    "self_attn.o_proj", "self_attn.q_norm", "self_attn.k_norm", "post_attention_layernorm",
                    "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj");
            for (int i = 0; i < names.size(); i++) {
                assertSame(checkpoint.tensor(p + names.get(i) + ".weight"), bound.get(i), names.get(i));
            }
            assertEquals(new WeightCheck(List.of(), 0, List.of()), ModelWeights.check(config(model), tensors(checkpoint)));
            assertEquals(List.of(), weights.notes());
        }
    }

    @Test
    void aTiedCheckpointUsesTheEmbeddingEvenWhenItStoresADifferentLmHead() {
        Path model = TinyQwen3.write(dir, true, TinyQwen3.shapes());
        try (Checkpoint checkpoint = Checkpoint.open(model)) {
            assertEquals(1f, firstValue(checkpoint.tensor("lm_head.weight"))); // the first tensor TinyQwen3 writes
            ModelWeights weights = ModelWeights.bind(config(model), tensors(checkpoint));
            assertSame(checkpoint.tensor("model.embed_tokens.weight"), weights.lmHead());
            assertEquals(2f, firstValue(weights.lmHead()));
            assertEquals(1, weights.notes().size(), weights.notes().toString());
            String note = weights.notes().getFirst();
            assertTrue(note.contains("lm_head.weight differs from model.embed_tokens.weight")
                    && note.contains("tie_word_embeddings is true"), note);
            WeightCheck check = ModelWeights.check(config(model), tensors(checkpoint));
            assertTrue(check.ok(), check.problemLine());
            assertEquals(weights.notes(), check.notes());
        }
    }

    @Test
    void aTiedCheckpointWhoseLmHeadEqualsTheEmbeddingGetsNoNote() {
        Map<String, long[]> shapes = TinyQwen3.shapes();
        SafetensorsWriter writer = new SafetensorsWriter();
        for (var entry : shapes.entrySet()) writer.zeros(entry.getKey(), DType.BF16, entry.getValue());
        TinyQwen3.write(dir, true, Map.of()); // config.json only
        writer.write(dir.resolve("model.safetensors"));
        try (Checkpoint checkpoint = Checkpoint.open(dir)) {
            ModelWeights weights = ModelWeights.bind(config(dir), tensors(checkpoint));
            assertSame(weights.embedTokens(), weights.lmHead());
            assertEquals(List.of(), weights.notes());
        }
    }

    @Test
    void bindsAnUntiedCheckpointAndRejectsOneWithoutLmHead() throws IOException {
        Path untied = TinyQwen3.write(dir.resolve("untied"), false, TinyQwen3.shapes());
        try (Checkpoint checkpoint = Checkpoint.open(untied)) {
            assertSame(checkpoint.tensor("lm_head.weight"), ModelWeights.bind(config(untied), tensors(checkpoint)).lmHead());
        }
        Path headless = TinyQwen3.writeTied(dir.resolve("headless"));
        Files.writeString(headless.resolve("config.json"), TinyQwen3.configJson(false));
        try (Checkpoint checkpoint = Checkpoint.open(headless)) {
            FsException e = assertThrows(FsException.class, () -> ModelWeights.bind(config(headless), tensors(checkpoint)));
            assertTrue(e.getMessage().contains("missing lm_head.weight (tie_word_embeddings is false)"), e.getMessage());
        }
    }

    @Test
    void reportsEveryProblemInOneLine() {
        Map<String, long[]> shapes = TinyQwen3.shapes();
        shapes.put("model.layers.0.self_attn.q_proj.weight", new long[] {TinyQwen3.HIDDEN, TinyQwen3.HIDDEN});
        shapes.put("model.layers.1.self_attn.k_norm.weight", new long[] {TinyQwen3.HEAD_DIM, 1});
        shapes.remove("model.layers.1.mlp.up_proj.weight");
        shapes.remove("model.norm.weight");
        Path model = TinyQwen3.write(dir, true, shapes);
        try (Checkpoint checkpoint = Checkpoint.open(model)) {
            FsException e = assertThrows(FsException.class, () -> ModelWeights.bind(config(model), tensors(checkpoint)));
            String message = e.getMessage();
            assertFalse(message.contains("\n"), message);
            assertTrue(message.startsWith(model + ": weights do not match config.json (4 problems): "), message);
            for (String problem : List.of(
                    "model.layers.0.self_attn.q_proj.weight has shape [16, 16], expected [32, 16]",
                    "model.layers.1.self_attn.k_norm.weight has shape [8, 1], expected [8]",
                    "missing model.layers.1.mlp.up_proj.weight",
                    "missing model.norm.weight")) {
                assertTrue(message.contains(problem), "'" + problem + "' in: " + message);
            }
            assertEquals(4, ModelWeights.check(config(model), tensors(checkpoint)).problemCount());
        }
    }

    @Test
    void aConfigClaimingABillionLayersIsOneProblemNotABillion() throws IOException {
        Path model = TinyQwen3.writeTied(dir);
        Files.writeString(model.resolve("config.json"),
                TinyQwen3.configJson(true).replace("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1000000000"));
        try (Checkpoint checkpoint = Checkpoint.open(model)) {
            FsException e = assertThrows(FsException.class, () -> ModelWeights.bind(config(model), tensors(checkpoint)));
            assertEquals(model + ": weights do not match config.json (1 problem): num_hidden_layers is 1000000000"
                    + " but the checkpoint stores 2 layers", e.getMessage());
        }
    }

    @Test
    void listsTheFirstProblemsAndCountsTheRest() throws IOException {
        Path model = TinyQwen3.writeTied(dir);
        // Every tensor has a hidden or a head dimension, so every one of them is now the wrong shape.
        Files.writeString(model.resolve("config.json"), TinyQwen3.configJson(true)
                .replace("\"hidden_size\": 16", "\"hidden_size\": 64")
                .replace("\"head_dim\": 8", "\"head_dim\": 16"));
        long expected = TinyQwen3.shapes().keySet().stream().filter(name -> !name.equals("lm_head.weight")).count();
        assertTrue(expected > WeightCheck.MAX_LISTED, "the test needs more problems than are listed");
        try (Checkpoint checkpoint = Checkpoint.open(model)) {
            WeightCheck check = ModelWeights.check(config(model), tensors(checkpoint));
            assertEquals(expected, check.problemCount());
            assertEquals(WeightCheck.MAX_LISTED, check.problems().size());
            FsException e = assertThrows(FsException.class, () -> ModelWeights.bind(config(model), tensors(checkpoint)));
            assertTrue(e.getMessage().contains("(" + expected + " problems): "), e.getMessage());
            assertTrue(e.getMessage().endsWith("; and " + (expected - WeightCheck.MAX_LISTED) + " more"), e.getMessage());
        }
    }

    @Test
    void rejectsLayersBeyondTheConfigByName() throws IOException {
        Path model = TinyQwen3.writeTied(dir);
        Files.writeString(model.resolve("config.json"),
                TinyQwen3.configJson(true).replace("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1"));
        try (Checkpoint checkpoint = Checkpoint.open(model)) {
            FsException e = assertThrows(FsException.class, () -> ModelWeights.bind(config(model), tensors(checkpoint)));
            String message = e.getMessage();
            assertTrue(message.contains("(2 problems): num_hidden_layers is 1 but the checkpoint stores 2 layers; "
                    + "11 stored tensors are not part of this model: 'model.layers.1.input_layernorm.weight', "), message);
            assertTrue(message.endsWith(" and 1 more"), message);
        }
    }

    @Test
    void rejectsStoredTensorsThatNoPartOfTheModelReads() {
        Map<String, long[]> shapes = TinyQwen3.shapes();
        shapes.remove("lm_head.weight");
        shapes.put("foo.bar", new long[] {3});
        shapes.put("", new long[] {1});
        shapes.put("model.layers.01.input_layernorm.weight", new long[] {TinyQwen3.HIDDEN});
        Path model = TinyQwen3.write(dir, true, shapes);
        try (Checkpoint checkpoint = Checkpoint.open(model)) {
            FsException e = assertThrows(FsException.class, () -> ModelWeights.bind(config(model), tensors(checkpoint)));
            assertTrue(e.getMessage().endsWith("(1 problem): 3 stored tensors are not part of this model: 'foo.bar',"
                    + " '' (an empty name), 'model.layers.01.input_layernorm.weight'"), e.getMessage());
        }
        Path untied = TinyQwen3.write(dir.resolve("untied"), false, TinyQwen3.shapes());
        try (Checkpoint checkpoint = Checkpoint.open(untied)) {
            assertTrue(ModelWeights.check(config(untied), tensors(checkpoint)).ok(), "an untied model reads lm_head.weight");
        }
    }

    @Test
    void acceptsEveryComputeDtypeAndRejectsOthers() {
        Map<String, long[]> shapes = TinyQwen3.shapes();
        SafetensorsWriter writer = new SafetensorsWriter();
        DType[] cycle = {DType.F32, DType.F16, DType.BF16};
        int i = 0;
        for (var entry : shapes.entrySet()) writer.zeros(entry.getKey(), cycle[i++ % 3], entry.getValue());
        TinyQwen3.write(dir, false, Map.of()); // config.json only
        writer.write(dir.resolve("model.safetensors"));
        try (Checkpoint checkpoint = Checkpoint.open(dir)) {
            assertEquals(List.of(), ModelWeights.check(config(dir), tensors(checkpoint)).problems());
        }

        SafetensorsWriter ints = new SafetensorsWriter();
        for (var entry : shapes.entrySet()) {
            ints.zeros(entry.getKey(), entry.getKey().equals("model.norm.weight") ? DType.I16 : DType.BF16, entry.getValue());
        }
        ints.write(dir.resolve("model.safetensors"));
        try (Checkpoint checkpoint = Checkpoint.open(dir)) {
            assertEquals(List.of("model.norm.weight is stored as I16, which fs does not read as a weight"),
                    ModelWeights.check(config(dir), tensors(checkpoint)).problems());
        }
    }

    /** q-tied's BF16 GGUF tensors, with some left out and others added, under its own config. */
    private static WeightCheck checkGguf(ModelConfig config, List<String> leftOut, List<Tensor> added) {
        try (ModelSource source = ModelSource.open(QTied.gguf("BF16"))) {
            List<Tensor> tensors = new java.util.ArrayList<>(source.tensors().tensors());
            tensors.removeIf(tensor -> leftOut.contains(tensor.name()));
            tensors.addAll(added);
            return ModelWeights.check(config, new ModelTensors(source.path(), TensorNaming.GGUF, tensors));
        }
    }

    private static ModelConfig qTiedConfig() {
        try (ModelSource source = ModelSource.open(QTied.gguf("BF16"))) {
            return source.config();
        }
    }

    @Test
    void bindsGgufNamesWithTheSameChecks() {
        ModelConfig config = qTiedConfig();
        assertTrue(checkGguf(config, List.of(), List.of()).ok());

        Tensor norm = new Tensor("blk.0.attn_norm.weight", DType.I32, new long[] {256}, MemorySegment.ofArray(new int[256]));
        Tensor stray = new Tensor("rope_freqs.weight", DType.F32, new long[] {64}, MemorySegment.ofArray(new float[64]));
        Tensor wide = new Tensor("blk.1.ffn_up.weight", DType.F32, new long[] {768, 512},
                MemorySegment.ofArray(new float[768 * 512]));
        WeightCheck check = checkGguf(config, List.of("output_norm.weight", "blk.1.ffn_up.weight", norm.name()),
                List.of(norm, stray, wide));
        assertEquals(List.of("blk.0.attn_norm.weight is stored as I32, which fs does not read as a weight",
                "blk.1.ffn_up.weight has shape [768, 512], expected [768, 256]",
                "missing output_norm.weight",
                "1 stored tensor is not part of this model: 'rope_freqs.weight'"), check.problems());
    }

    @Test
    void aGgufBlockCountOtherThanTheStoredLayersIsOneProblem() {
        ModelConfig stored = qTiedConfig();
        ModelConfig threeLayers = new ModelConfig(stored.architecture(), stored.hiddenSize(), 3,
                stored.numAttentionHeads(), stored.numKeyValueHeads(), stored.headDim(),
                java.util.Collections.nCopies(3, stored.feedForward(0)), stored.vocabSize(),
                stored.rmsNormEps(), stored.ropeTheta(), stored.ropeScaling(), stored.maxPositionEmbeddings(),
                stored.tieWordEmbeddings(), stored.bosTokenId(), stored.eosTokenIds(), stored.torchDtype());
        assertEquals(List.of("qwen3.block_count is 3 but the file stores 2 layers"),
                checkGguf(threeLayers, List.of(), List.of()).problems());
        // A layer stored only in a format fs cannot compute with still counts as stored.
        long queryDim = stored.queryDim();
        Tensor query = new Tensor("blk.2.attn_q.weight", DType.I32, new long[] {queryDim, stored.hiddenSize()},
                MemorySegment.ofArray(new int[Math.toIntExact(queryDim * stored.hiddenSize())]));
        List<String> problems = checkGguf(threeLayers, List.of(), List.of(query)).problems();
        assertEquals("missing blk.2.attn_norm.weight", problems.get(0), problems.toString());
        assertEquals("blk.2.attn_q.weight is stored as I32, which fs does not read as a weight", problems.get(1));
    }

    /** An unread tensor's name holding a line break, or 2,000 characters, is quoted and cut. */
    @Test
    void quotesTheNamesOfUnreadTensors() {
        Map<String, long[]> shapes = TinyQwen3.shapes();
        shapes.remove("lm_head.weight");
        shapes.put("foo\nbar" + "x".repeat(2000), new long[] {3});
        Path model = TinyQwen3.write(dir, true, shapes);
        try (Checkpoint checkpoint = Checkpoint.open(model)) {
            FsException e = assertThrows(FsException.class, () -> ModelWeights.bind(config(model), tensors(checkpoint)));
            assertTrue(e.getMessage().endsWith("1 stored tensor is not part of this model: 'foo\\u000abar"
                    + "x".repeat(53) + "…'"), e.getMessage());
        }
    }
}
