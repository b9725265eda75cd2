package fs.api;

/**
 * One input's embedding from {@link FsModel#embed}: the final-normed hidden state of its last token, L2-normalized.
 *
 * @param index  the input's place among those given
 * @param vector unit length (of the dimensions asked for)
 * @param tokens the tokens the model ran for it (a text's with the token its tokenizer appends)
 */
public record Embedding(int index, float[] vector, int tokens) {}
