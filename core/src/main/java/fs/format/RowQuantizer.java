package fs.format;

import java.lang.foreign.MemorySegment;

/**
 * Turns rows of float weights into one GGUF block format, as llama.cpp's quantize functions do. Implementations are
 * stateless and safe to call from any thread; {@code fs quantize} runs one per tensor type, over many tensors at once.
 */
public interface RowQuantizer {
    /**
     * Quantizes {@code rows} rows of {@code columns} weights from {@code weights[0, rows·columns)} into
     * {@code out} at byte {@code outOffset}, {@code rows · type.rowBytes(columns)} bytes in all.
     *
     * @param importance per column, how much each weight's error counts (an importance matrix's mean squared
     *     activations), or null to weigh every column as llama.cpp does without one
     */
    void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset);
}
