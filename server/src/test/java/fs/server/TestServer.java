package fs.server;

import fs.backend.cpu.VectorBackend;
import fs.chat.ChatMessage;
import fs.chat.ChatTemplate;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.generate.Scheduler;
import fs.model.GenerationConfig;
import fs.model.ModelConfig;
import fs.model.Probe;
import fs.model.SingleSequence;
import fs.model.TestModel;
import fs.tensor.Tensor;
import fs.tokenizer.Tokenizer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.stream.IntStream;

/**
 * models/tiny-tied loaded on the CPU, and an {@link ApiServer} on a free port of 127.0.0.1 once {@link #serve} is
 * called. Greedy expectations come from {@link #greedy}, which runs the model directly and so must be called before
 * serving (then the engine's thread owns the model).
 */
final class TestServer implements AutoCloseable {
    static final Path MODEL = Path.of(System.getProperty("fs.repo"), "models", "tiny-tied");
    static final String MODEL_ID = "tiny-tied";

    final TestModel model;
    final Tokenizer tokenizer;
    final ChatTemplate template;
    final GenerationConfig generationConfig;
    final int[] stopIds;
    private final StringWriter log = new StringWriter();
    private ApiServer server;

    private TestServer(int contextLength) {
        model = TestModel.open(MODEL, new VectorBackend(2), contextLength, 64, 1);
        tokenizer = Tokenizer.load(MODEL);
        template = ChatTemplate.load(MODEL);
        generationConfig = GenerationConfig.read(MODEL, model.model().config().vocabSize());
        stopIds = IntStream.concat(model.model().config().eosTokenIds().stream().mapToInt(Integer::intValue),
                generationConfig.eosTokenIds().stream().mapToInt(Integer::intValue)).distinct().toArray();
    }

    static TestServer load(int contextLength) {
        return new TestServer(contextLength);
    }

    /** The prompt ids of one user message through the chat template. */
    int[] chatPrompt(String user, Boolean enableThinking) {
        return tokenizer.encode(template.render(List.of(new ChatMessage("user", user)), true, enableThinking));
    }

    /** What the existing Generator produces greedily from {@code prompt}: the reference for answers. */
    Generator.Generation greedy(int[] prompt, int maxTokens) {
        if (server != null) throw new IllegalStateException("the engine owns the model once serving");
        return new Generator(model.sequence(), stopIds, SamplingParams.greedy()).generate(prompt, maxTokens, id -> {});
    }

    /**
     * The logits a single sequence computes for the position after {@code tokens} (run whole from position 0, at most
     * the batch's 64 rows). Like {@link #greedy}, only before serving.
     */
    float[] logitsAfter(int[] tokens) {
        if (server != null) throw new IllegalStateException("the engine owns the model once serving");
        SingleSequence sequence = model.sequence();
        sequence.forward(tokens, 0, Probe.NONE);
        float[] logits = new float[model.model().config().vocabSize()];
        sequence.readLogits(sequence.logitRows() - 1, logits);
        return logits;
    }

    /** The text a client should see for generated ids (special tokens left out). */
    String text(int[] ids) {
        return tokenizer.decode(ids, true);
    }

    /** The engine fs serve runs: {@code slots} of the fixture's context, up to {@code queueLimit} waiting. */
    SchedulerEngine schedulerEngine(int slots, int queueLimit) {
        return SchedulerEngine.over(new Scheduler(model.model(), new Scheduler.Config(slots,
                model.sequence().shape().contextLength(), 64, queueLimit)), stopIds, () -> {});
    }

    /** Starts the server, answering with {@code engine} (the server closes it). */
    ApiServer serve(CompletionEngine engine, String apiKey) {
        server = listen(apiKey);
        server.ready(ServedModel.forChat(MODEL_ID, 1, details(), tokenizer, () -> template,
                () -> SamplingParams.of(generationConfig), engine));
        return server;
    }

    /** Starts the server as {@code config} says (which must listen on 127.0.0.1), answering with {@code engine}. */
    ApiServer serveWith(CompletionEngine engine, ServerConfig config) {
        server = ApiServer.start(config, new PrintWriter(log, true));
        server.ready(ServedModel.forChat(MODEL_ID, 1, details(), tokenizer, () -> template,
                () -> SamplingParams.of(generationConfig), engine));
        return server;
    }

    /** What fs serve would say of models/tiny-tied. */
    ModelDetails details() {
        return details(model.checkpoint().tensors(), model.model().config());
    }

    /**
     * What fs serve would say of a safetensors checkpoint of {@code tensors}: its architecture, parameters and bytes,
     * a size label in millions and its first tensor's dtype as the file type.
     */
    static ModelDetails details(List<Tensor> tensors, ModelConfig config) {
        long parameters = tensors.stream().mapToLong(Tensor::elementCount).sum();
        return new ModelDetails("safetensors", config.architecture().ggufName(), parameters,
                String.format(Locale.ROOT, "%.1fM", parameters / 1e6), tensors.getFirst().dtype().name(),
                tensors.stream().mapToLong(Tensor::byteSize).sum(), Instant.ofEpochSecond(1));
    }

    /** Starts the server without a model: it says it is loading. */
    ApiServer listen(String apiKey) {
        server = ApiServer.start("127.0.0.1", 0, apiKey, new PrintWriter(log, true));
        return server;
    }

    java.net.InetSocketAddress serverAddress() {
        return server.address();
    }

    String url(String path) {
        return "http://127.0.0.1:" + server.address().getPort() + path;
    }

    String log() {
        synchronized (log) {
            return log.toString();
        }
    }

    @Override
    public void close() {
        try {
            if (server != null) server.shutdown(Duration.ofSeconds(1));
        } finally {
            model.close();
        }
    }
}
