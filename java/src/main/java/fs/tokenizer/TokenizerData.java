package fs.tokenizer;

import java.text.Normalizer;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Everything a {@link Tokenizer} is made from, as read from tokenizer.json or from {@link TokenizerCache}.
 *
 * @param byteIds the id of each byte's one-character token, -1 where the vocabulary lacks it
 * @param ignoreMerges tokenizer.json's ignore_merges: a pre-token in the vocabulary is taken whole
 * @param splitPatterns the pre-tokenizer's Split steps, in order
 */
record TokenizerData(TokenIds vocab, MergeTable merges, int[] byteIds, boolean ignoreMerges, List<AddedToken> added,
        List<Normalizer.Form> normalizerForms, List<Pattern> splitPatterns) {}
