package fs.grammar;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import fs.backend.cpu.VectorBackend;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.model.Golden;
import fs.model.TestModel;
import fs.tokenizer.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A grammar that agrees with what the model would write anyway changes nothing; one that does not is obeyed. */
class GreedyAgreementTest {
    private static final int TOKENS = 12;

    /** A GBNF literal of exactly {@code text}, every character escaped. */
    private static String literal(String text) {
        StringBuilder out = new StringBuilder("\"");
        text.codePoints().forEach(c -> out.append(String.format("\\U%08X", c)));
        return out.append('"').toString();
    }

    @Test
    void aGrammarOfTheGreedyAnswerLeavesItUnchanged() throws Exception {
        Tokenizer tokenizer = GrammarConstraintTest.TOKENIZER;
        int end = GrammarConstraintTest.IM_END;
        int[] prompt = tokenizer.encode("The answer is");
        try (TestModel test = TestModel.open(Golden.modelDir("tiny-tied"), new VectorBackend(2), 256, 16, 1)) {
            Generator generator = new Generator(test.sequence(), new int[] {end}, SamplingParams.greedy());
            int[] free = generator.generate(prompt, TOKENS, id -> {}).ids();
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            for (int id : free) bytes.writeBytes(tokenizer.tokenBytes(id));
            String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
            Grammar agreeing = Grammar.parse("root ::= " + literal(text));
            Generator.Generation constrained = generator.generate(prompt, TOKENS + 1, id -> {}, () -> false,
                    new GrammarConstraint(agreeing, GrammarConstraintTest.VOCABULARY, new int[] {end}));
            assertArrayEquals(free, constrained.ids());
            assertEquals(StopReason.END_OF_SEQUENCE, constrained.stopReason(), "only the end token is left after the text");

            // A grammar the greedy answer does not fit: the output follows the grammar instead.
            Grammar other = Grammar.parse("root ::= \"yes\" | \"no\"");
            Generator.Generation forced = generator.generate(prompt, TOKENS, id -> {}, () -> false,
                    new GrammarConstraint(other, GrammarConstraintTest.VOCABULARY, new int[] {end}));
            String answer = tokenizer.decode(forced.ids(), false);
            assertNotEquals(text, answer);
            assertEquals(true, answer.equals("yes") || answer.equals("no"), answer);
            assertEquals(StopReason.END_OF_SEQUENCE, forced.stopReason());
        }
    }
}
