package fs.server;

import fs.generate.TokenLogprobs;
import fs.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.List;

/**
 * One generated token as a logprobs answer reports it: the token, the most likely alternatives at its position, and
 * where its text starts in the completion text (for the legacy endpoint's {@code text_offset}).
 *
 * @param chosen     the generated token
 * @param top        the most likely tokens, most likely first, as many as the request asked for
 * @param textOffset code points of completion text before this token's (Unicode code points, as Python indexes a
 *                   string)
 */
record LogprobEntry(Candidate chosen, List<Candidate> top, int textOffset) {

    /**
     * A token and its log-probability.
     *
     * @param text    the token's own bytes read as UTF-8, a byte of an unfinished character becoming U+FFFD (as
     *                OpenAI shows such a token); a special token's literal text
     * @param bytes   the token's raw UTF-8 bytes
     * @param logprob its natural log-probability under the model's raw distribution
     */
    record Candidate(String text, byte[] bytes, float logprob) {}

    /**
     * The entry of {@code logprobs} with the tokens' texts from {@code tokenizer}. Ids past the tokenizer's vocabulary
     * (the model's padding rows) have no text and no bytes.
     */
    static LogprobEntry of(TokenLogprobs logprobs, Tokenizer tokenizer, int textOffset) {
        List<Candidate> top = new ArrayList<>(logprobs.topTokens().length);
        for (int i = 0; i < logprobs.topTokens().length; i++) {
            top.add(candidate(logprobs.topTokens()[i], logprobs.topLogprobs()[i], tokenizer));
        }
        return new LogprobEntry(candidate(logprobs.token(), logprobs.logprob(), tokenizer), List.copyOf(top),
                textOffset);
    }

    private static Candidate candidate(int id, float logprob, Tokenizer tokenizer) {
        if (id >= tokenizer.vocabSize()) return new Candidate("", new byte[0], logprob);
        return new Candidate(tokenizer.decode(new int[] {id}, false), tokenizer.tokenBytes(id), logprob);
    }
}
