package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class OllamaModelsTest {
    /** Ollama names file types as its quantize flag does: Q4_K_M, not llama.cpp's "Q4_K - Medium". */
    @Test
    void llamaCppsFileTypesGetOllamasQuantizationNames() {
        assertEquals("Q4_K_M", OllamaModels.quantizationLevel("Q4_K - Medium"));
        assertEquals("Q3_K_S", OllamaModels.quantizationLevel("Q3_K - Small"));
        assertEquals("Q3_K_L", OllamaModels.quantizationLevel("Q3_K - Large"));
        assertEquals("Q8_0", OllamaModels.quantizationLevel("(guessed) Q8_0"));
        assertEquals("F32", OllamaModels.quantizationLevel("all F32"));
        assertEquals("IQ2_XXS", OllamaModels.quantizationLevel("IQ2_XXS - 2.0625 bpw"));
        assertEquals("BF16", OllamaModels.quantizationLevel("BF16"));
    }
}
