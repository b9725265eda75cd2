package fs.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.api.FsModel;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClientBuilderCustomizer;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.boot.Banner;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.NestedExceptionUtils;

/** When {@link FsAutoConfiguration} creates its beans, and what a wrong {@code fs.*} value ends the startup with. */
class FsAutoConfigurationTest {
    private static ConfigurableApplicationContext start(String... properties) {
        List<String> all = new java.util.ArrayList<>(List.of(properties));
        all.add("logging.level.root=off"); // a failed startup logs its stack trace: the test reads the exception
        return new SpringApplicationBuilder(FsAutoConfiguration.class).bannerMode(Banner.Mode.OFF)
                .properties(all.toArray(String[]::new)).run();
    }

    @Test
    void withoutModelPropertiesThereAreNoBeans() {
        try (var context = start()) {
            assertEquals(0, context.getBeansOfType(FsModel.class).size());
            assertEquals(0, context.getBeansOfType(ChatModel.class).size());
            assertEquals(0, context.getBeansOfType(EmbeddingModel.class).size());
            assertEquals(0, context.getBeansOfType(ChatClientBuilderCustomizer.class).size());
        }
    }

    @Test
    void nativeStructuredOutputCanBeTurnedOff() {
        try (var context = start("fs.model=" + System.getProperty("fs.repo") + "/models/tiny-tied", "fs.threads=1",
                "fs.native-structured-output=false")) {
            assertNotNull(context.getBean(FsChatModel.class));
            assertEquals(0, context.getBeansOfType(ChatClientBuilderCustomizer.class).size());
        }
    }

    @Test
    void aModelThatCannotBeLoadedEndsTheStartupWithFsOneLine() {
        FsException cause = startupFailure("fs.model=/no/such/model");
        assertTrue(cause.getMessage().contains("/no/such/model") && !cause.getMessage().contains("\n"),
                cause.getMessage());
        FailureAnalysis analysis = new FsFailureAnalyzer().analyze(new IllegalStateException("bean creation", cause));
        assertNotNull(analysis, "Boot reports fs's line, not the stack trace");
        assertEquals(cause.getMessage(), analysis.getDescription());
    }

    @Test
    void aWrongValueEndsTheStartupWithFsOneLine() {
        FsException cause = startupFailure("fs.model=" + System.getProperty("fs.repo") + "/models/tiny-tied",
                "fs.backend=quantum");
        assertTrue(cause.getMessage().contains("quantum"), cause.getMessage());
    }

    private static FsException startupFailure(String... properties) {
        RuntimeException failure = assertThrows(RuntimeException.class, () -> start(properties).close());
        return assertInstanceOf(FsException.class, NestedExceptionUtils.getMostSpecificCause(failure));
    }
}
