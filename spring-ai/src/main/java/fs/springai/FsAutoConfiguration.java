package fs.springai;

import fs.api.EmbedParams;
import fs.api.FsModel;
import org.springframework.ai.chat.client.AdvisorParams;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.ChatClientBuilderCustomizer;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Boot's auto-configuration of fs: with {@code fs.model} set, the model it names loaded into this JVM (bean
 * {@code fsModel}, closed with the context) and a {@link FsChatModel} over it; with {@code fs.embedding-model} set,
 * that model (bean {@code fsEmbeddingFsModel}) and a {@link FsEmbeddingModel} over it. Both load as the other
 * {@link FsProperties} say. A bean of the application's own of either type replaces this one's. With ChatClient on the
 * class path, its builders ask for native structured output (unless {@code fs.native-structured-output=false}): an
 * {@code entity(…)}'s JSON schema then reaches the chat model, which holds the answer to it by grammar, rather than
 * being asked for in the prompt's text.
 */
@AutoConfiguration
@EnableConfigurationProperties(FsProperties.class)
public class FsAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnProperty("fs.model")
    @ConditionalOnMissingBean(name = "fsModel")
    public FsModel fsModel(FsProperties properties) {
        return FsModel.load(properties.model(), properties.loadOptions());
    }

    @Bean
    @ConditionalOnProperty("fs.model")
    @ConditionalOnMissingBean
    public FsChatModel fsChatModel(@Qualifier("fsModel") FsModel model, FsProperties properties) {
        return new FsChatModel(model, properties.chatOptions());
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnProperty("fs.embedding-model")
    @ConditionalOnMissingBean(name = "fsEmbeddingFsModel")
    public FsModel fsEmbeddingFsModel(FsProperties properties) {
        return FsModel.load(properties.embeddingModel(), properties.loadOptions());
    }

    @Bean
    @ConditionalOnProperty("fs.embedding-model")
    @ConditionalOnMissingBean
    public FsEmbeddingModel fsEmbeddingModel(@Qualifier("fsEmbeddingFsModel") FsModel model) {
        return new FsEmbeddingModel(model, EmbedParams.defaults());
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ChatClient.class)
    @ConditionalOnProperty("fs.model")
    static class NativeStructuredOutput {
        @Bean
        @ConditionalOnProperty(name = "fs.native-structured-output", havingValue = "true", matchIfMissing = true)
        ChatClientBuilderCustomizer fsNativeStructuredOutput() {
            return builder -> builder.defaultAdvisors(AdvisorParams.ENABLE_NATIVE_STRUCTURED_OUTPUT);
        }
    }
}
