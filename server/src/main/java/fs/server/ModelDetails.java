package fs.server;

import java.time.Instant;

/**
 * What the served model is, for the APIs that describe it (Ollama's {@code /api/tags} and {@code /api/show}), as the
 * loaded files tell it.
 *
 * @param format     the file format: "gguf" or "safetensors"
 * @param family     the architecture as GGUF names it: "qwen3", "qwen3moe"
 * @param parameters elements of every stored tensor
 * @param sizeLabel  llama.cpp's size label: "0.6B", "30B.A3B", "9.4M"
 * @param fileType   llama.cpp's name of the file type: "Q4_K - Medium", "BF16"
 * @param bytes      the weights' bytes as stored
 * @param modified   when the model's file (or directory) was last modified
 */
public record ModelDetails(String format, String family, long parameters, String sizeLabel, String fileType,
                           long bytes, Instant modified) {}
