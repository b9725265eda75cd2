package fs.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.model.ModelConfig;
import fs.safetensors.SafetensorsFile;
import fs.tensor.DType;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/** llama.cpp's own GGUF files parse into the tensors the checkpoint's config.json implies, where llama.cpp put them. */
class QTiedFilesTest {
    private static final List<String> TYPES = QTied.TYPES;

    /** Every tensor of the checkpoint and its row-major shape, from config.json alone. */
    private static Map<String, long[]> expectedShapes() {
        ModelConfig c = ModelConfig.read(QTied.dir().resolve("config.json"));
        Map<String, long[]> shapes = new LinkedHashMap<>();
        shapes.put("token_embd.weight", new long[] {c.vocabSize(), c.hiddenSize()});
        shapes.put("output_norm.weight", new long[] {c.hiddenSize()});
        for (int i = 0; i < c.numHiddenLayers(); i++) {
            String b = "blk." + i + ".";
            shapes.put(b + "attn_norm.weight", new long[] {c.hiddenSize()});
            shapes.put(b + "attn_q.weight", new long[] {c.queryDim(), c.hiddenSize()});
            shapes.put(b + "attn_k.weight", new long[] {c.kvDim(), c.hiddenSize()});
            shapes.put(b + "attn_v.weight", new long[] {c.kvDim(), c.hiddenSize()});
            shapes.put(b + "attn_output.weight", new long[] {c.hiddenSize(), c.queryDim()});
            shapes.put(b + "attn_q_norm.weight", new long[] {c.headDim()});
            shapes.put(b + "attn_k_norm.weight", new long[] {c.headDim()});
            shapes.put(b + "ffn_norm.weight", new long[] {c.hiddenSize()});
            shapes.put(b + "ffn_gate.weight", new long[] {c.feedForward(0).width(), c.hiddenSize()});
            shapes.put(b + "ffn_up.weight", new long[] {c.feedForward(0).width(), c.hiddenSize()});
            shapes.put(b + "ffn_down.weight", new long[] {c.hiddenSize(), c.feedForward(0).width()});
        }
        return shapes;
    }

    @ParameterizedTest
    @FieldSource("TYPES")
    void everyTensorHasItsTypeShapeAndPlaceInTheFile(String fileType) throws IOException {
        Map<String, long[]> shapes = expectedShapes();
        ValueLayout.OfLong i64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType));
                SafetensorsFile samples = SafetensorsFile.open(QTied.samples(fileType))) {
            assertEquals(3, gguf.version());
            assertEquals(Set.copyOf(shapes.keySet()), Set.copyOf(gguf.tensors().stream().map(GgufTensor::name).toList()));
            long expectedOffset = 0; // llama.cpp writes the data in tensor-info order, each tensor aligned
            for (GgufTensor tensor : gguf.tensors()) {
                long typeId = samples.tensor(tensor.name() + ".type").orElseThrow().data().get(i64, 0);
                assertEquals(DType.ggmlNameOf(typeId), tensor.type().name(), tensor.name());
                assertArrayEquals(shapes.get(tensor.name()), tensor.shape(), tensor.name());
                assertEquals(expectedOffset, tensor.offset(), tensor.name());
                assertEquals(tensor.rows() * tensor.rowBytes(), tensor.data().byteSize(), tensor.name());
                expectedOffset = Math.ceilDiv(tensor.offset() + tensor.data().byteSize(), gguf.alignment())
                        * (long) gguf.alignment();
            }
            assertEquals(Files.size(QTied.gguf(fileType)), gguf.dataStart() + expectedOffset, "the data ends the file");
            assertTrue(gguf.tensor("output.weight").isEmpty(), "tied: no output.weight");
        }
    }
}
