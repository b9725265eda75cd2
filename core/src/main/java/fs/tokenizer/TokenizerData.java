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
        List<Normalizer.Form> normalizerForms, List<Pattern> splitPatterns) {
    /**
     * How many ids may go unused below the highest: a tokenizer may reserve a few, but the tables are sized by the
     * highest id, so one far beyond the tokens there are (an id of 10^9 in a file of 150k tokens) would make them
     * gigabytes of nothing.
     */
    static final int MAX_UNUSED_IDS = 1 << 16;

    /** One more than the highest id, added tokens included: the size of the tokenizer's tables by id. */
    int idLimit() {
        int limit = vocab.idLimit();
        for (AddedToken token : added) limit = Math.max(limit, token.id() + 1);
        return limit;
    }

    /** How many tokens there are, the vocabulary's and the added ones. */
    long tokenCount() {
        return (long) vocab.size() + added.size();
    }

    /** No id may reach this: the token count plus {@link #MAX_UNUSED_IDS}. */
    long idBound() {
        return tokenCount() + MAX_UNUSED_IDS;
    }
}
