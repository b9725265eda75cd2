package fs.backend.opencl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import fs.generate.Generator;
import fs.generate.RecordingSink;
import fs.generate.SamplingParams;
import fs.generate.Scheduler;
import fs.model.Golden;
import fs.model.TestModel;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The scheduler on the OpenCL backend, both kernel designs: the backend created on the test's thread is driven by the
 * scheduler's, and concurrent greedy requests get the tokens the generator gives each alone.
 */
class OpenClSchedulerTest {

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void concurrentRequestsGetTheTokensEachGetsAlone(KernelDesign design) throws Exception {
        Golden golden = Golden.load("tiny-untied");
        int[][] prompts = new int[3][];
        for (int i = 0; i < prompts.length; i++) prompts[i] = Arrays.copyOfRange(golden.promptIds(), 4 * i, 9 * i + 3);
        int maxTokens = 6;
        try (TestModel test = TestModel.open(Golden.modelDir("tiny-untied"),
                new OpenClBackend(OpenClTestSupport.device(), design), 32, 16, 1)) {
            List<int[]> results;
            try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(2, 32, 4, 4))) {
                results = RecordingSink.greedy(scheduler, List.of(prompts), maxTokens);
            }
            for (int i = 0; i < prompts.length; i++) {
                Generator alone = new Generator(test.sequence(), new int[0], SamplingParams.greedy());
                int[] expected = alone.generate(prompts[i], maxTokens, id -> {}).ids();
                assertEquals(maxTokens, expected.length);
                assertArrayEquals(expected, results.get(i), design + " request " + i);
            }
        }
    }
}
