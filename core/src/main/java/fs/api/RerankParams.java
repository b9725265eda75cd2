package fs.api;

import fs.FsException;
import fs.embed.Reranker;

/**
 * How {@link FsModel#rerank} scores.
 *
 * @param instruction the prompt's instruction (the model card's default: {@link Reranker#DEFAULT_INSTRUCTION})
 * @param topN        the best documents returned; 0: all of them
 * @param truncate    whether a document whose prompt is longer than the context loses its end rather than failing
 */
public record RerankParams(String instruction, int topN, boolean truncate) {
    /** Checks the values. */
    public RerankParams {
        if (instruction == null || instruction.isEmpty()) throw new FsException("the instruction is empty");
        if (topN < 0) throw new FsException("topN must be ≥ 0 (0: all), got " + topN);
    }

    /** The model card's instruction, every document, no truncation. */
    public static RerankParams defaults() {
        return new RerankParams(Reranker.DEFAULT_INSTRUCTION, 0, false);
    }

    public RerankParams withInstruction(String value) {
        return new RerankParams(value, topN, truncate);
    }

    public RerankParams withTopN(int value) {
        return new RerankParams(instruction, value, truncate);
    }

    public RerankParams withTruncate(boolean value) {
        return new RerankParams(instruction, topN, value);
    }
}
