package fs.api;

import fs.FsException;
import fs.backend.KvCacheType;
import fs.chat.ChatTemplate;
import fs.chat.constraint.GrammarCache;
import fs.chat.constraint.ModelOpenedCalls;
import fs.engine.BackendChoice;
import fs.engine.Engine;
import fs.engine.LoadedModel;
import fs.engine.Offload;
import fs.embed.Embeddings;
import fs.embed.Reranker;
import fs.embed.ScheduledRetrieval;
import fs.generate.SamplingParams;
import fs.generate.Scheduler;
import fs.generate.TokenConstraint;
import fs.generate.TokenSink;
import fs.grammar.GrammarConstraint;
import fs.grammar.TokenVocabulary;
import fs.model.GenerationConfig;
import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.io.PrintWriter;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A loaded model: its weights uploaded once to a backend, and one scheduler thread that owns that backend and runs
 * every forward, decoding the chats that are answering at the same time together in one batch (up to
 * {@link Options#parallelSlots} of them; more wait their turn). Each chat answers in a slot of the KV cache, which
 * keeps the tokens of its last answer, so that the next message of the same conversation only runs what is new.
 *
 * <p>Thread-safe: {@link #newChat} and the chats' {@link Chat#send} may be called from any threads at once.
 * {@link #close} ends the answers still running (they end as {@link StopReason#CANCELLED}) and frees the
 * model.
 */
public final class FsModel implements AutoCloseable {
    /** Sends that may wait for a slot beyond the busy ones; more fail rather than queue without bound. */
    static final int QUEUE_LIMIT = 1024;

    private final LoadedModel<Scheduler> loaded;
    private final Scheduler scheduler;
    private final Tokenizer tokenizer;
    private final GenerationConfig defaults;
    private final int[] stopIds;
    private final ChatTemplate template; // null: templateProblem says why there is none
    private final FsException templateProblem;
    private final GrammarCache grammars = new GrammarCache(16);
    private final ScheduledRetrieval retrieval;
    private boolean closed; // guarded by this

    /**
     * Where the model runs and how much it holds.
     *
     * @param backend       "auto" (an OpenCL GPU when there is one, else the CPU), "cpu", "java" (the CPU on the
     *                      exact Vector API kernels alone) or "opencl"
     * @param threads       CPU threads for the cpu backend
     * @param contextLength KV cache positions, shared out among the slots as llama-server and {@code fs serve} do
     *                      (each chat's history plus its answer must fit its share); 0: min(the model's
     *                      max_position_embeddings, 4096)
     * @param parallelSlots chats that answer at the same time, decoded together in each forward
     * @param cacheTypeK    what the KV cache stores keys as, named as llama.cpp's -ctk names it: "f32", "f16",
     *                      "bf16" or "q8_0"; null: f16, as llama.cpp's default, but f32 on the "java" backend
     * @param cacheTypeV    what the KV cache stores values as (-ctv), named and defaulted as cacheTypeK
     * @param gpuLayers     layers the OpenCL device runs, as llama.cpp's -ngl: "N" (the last N, the output too when N
     *                      is above the layer count), "all" or "auto" (as many as its memory holds), the rest on the
     *                      CPU; null: the whole model where backend says. Needs backend "opencl" or "auto"
     * @param cpuMoeLayers  the layers, from the first, whose mixtures of experts stay on the CPU (--n-cpu-moe; the
     *                      layer count or more: every layer's, --cpu-moe); 0: none
     * @param log           where download progress and notes (such as "running on the CPU: …") go
     */
    public record Options(String backend, int threads, int contextLength, int parallelSlots, String cacheTypeK,
                          String cacheTypeV, String gpuLayers, int cpuMoeLayers, PrintWriter log) {
        /** Checks the values: each wrong one is an FsException naming it. */
        public Options {
            if (BackendChoice.named(backend).isEmpty()) {
                throw new FsException("backend must be one of " + BackendChoice.SPELLINGS + ", got " + backend);
            }
            if (threads < 1) throw new FsException("threads must be at least 1, got " + threads);
            if (contextLength < 0) {
                throw new FsException("the context length must be ≥ 0 (0: the model's), got " + contextLength);
            }
            if (parallelSlots < 1 || parallelSlots > 256) {
                throw new FsException("parallel slots must be in 1..256, got " + parallelSlots);
            }
            if (cacheTypeK != null) KvCacheType.parse(cacheTypeK);
            if (cacheTypeV != null) KvCacheType.parse(cacheTypeV);
            offload(backend, gpuLayers, cpuMoeLayers);
            Objects.requireNonNull(log, "log");
        }

        /** Backend auto, a thread per available processor, the default context and cache types, one slot, no log. */
        public static Options defaults() {
            return new Options("auto", Runtime.getRuntime().availableProcessors(), 0, 1, null, null, null, 0,
                    new PrintWriter(Writer.nullWriter()));
        }

        /** These options on another backend: auto, cpu, java or opencl. */
        public Options withBackend(String value) {
            return new Options(value, threads, contextLength, parallelSlots, cacheTypeK, cacheTypeV,
                    gpuLayers, cpuMoeLayers, log);
        }

        /** These options with another number of CPU threads. */
        public Options withThreads(int value) {
            return new Options(backend, value, contextLength, parallelSlots, cacheTypeK, cacheTypeV,
                    gpuLayers, cpuMoeLayers, log);
        }

        /** These options with another context length (0: the model's default). */
        public Options withContextLength(int value) {
            return new Options(backend, threads, value, parallelSlots, cacheTypeK, cacheTypeV,
                    gpuLayers, cpuMoeLayers, log);
        }

        /** These options with another number of chats answering at once. */
        public Options withParallelSlots(int value) {
            return new Options(backend, threads, contextLength, value, cacheTypeK, cacheTypeV,
                    gpuLayers, cpuMoeLayers, log);
        }

        /** These options with the KV cache's keys stored as {@code value}: f32, f16, bf16 or q8_0 (null: default). */
        public Options withCacheTypeK(String value) {
            return new Options(backend, threads, contextLength, parallelSlots, value, cacheTypeV,
                    gpuLayers, cpuMoeLayers, log);
        }

        /** These options with the KV cache's values stored as {@code value}: f32, f16, bf16 or q8_0 (null: default). */
        public Options withCacheTypeV(String value) {
            return new Options(backend, threads, contextLength, parallelSlots, cacheTypeK, value,
                    gpuLayers, cpuMoeLayers, log);
        }

        /** These options with {@code value} layers on the OpenCL device: "N", "all" or "auto" (null: all of them). */
        public Options withGpuLayers(String value) {
            return new Options(backend, threads, contextLength, parallelSlots, cacheTypeK, cacheTypeV, value,
                    cpuMoeLayers, log);
        }

        /** These options with the experts of the first {@code value} layers on the CPU (0: none). */
        public Options withCpuMoeLayers(int value) {
            return new Options(backend, threads, contextLength, parallelSlots, cacheTypeK, cacheTypeV, gpuLayers,
                    value, log);
        }

        /** These options logging to {@code value} (e.g. {@code new PrintWriter(System.err, true)}). */
        public Options withLog(PrintWriter value) {
            return new Options(backend, threads, contextLength, parallelSlots, cacheTypeK, cacheTypeV, gpuLayers,
                    cpuMoeLayers, value);
        }
    }

    /** What gpuLayers and cpuMoeLayers ask of the device (null: nothing), each wrong value an FsException. */
    private static Offload offload(String backend, String gpuLayers, int cpuMoeLayers) {
        if (gpuLayers == null && cpuMoeLayers == 0) return null;
        Offload offload = new Offload(gpuLayers == null ? Offload.ALL : Offload.gpuLayers(gpuLayers), cpuMoeLayers,
                List.of());
        BackendChoice choice = BackendChoice.named(backend).orElseThrow();
        if (offload.gpuLayers() != 0 && (choice == BackendChoice.CPU || choice == BackendChoice.JAVA)) {
            throw new FsException("gpuLayers " + gpuLayers + " puts layers on an OpenCL device: it needs backend "
                    + "opencl or auto, not " + backend);
        }
        return offload;
    }

    private FsModel(LoadedModel<Scheduler> loaded, Tokenizer tokenizer, GenerationConfig defaults) {
        this.loaded = loaded;
        this.scheduler = loaded.state();
        this.tokenizer = tokenizer;
        this.defaults = defaults;
        this.stopIds = loaded.source().stopIds();
        ChatTemplate found = null;
        FsException problem = null;
        try {
            found = loaded.source().chatTemplate();
        } catch (FsException e) {
            problem = e; // a model without a usable template still loads: newChat says why it cannot chat
        }
        this.template = found;
        this.templateProblem = problem;
        this.retrieval = new ScheduledRetrieval(loaded, tokenizer);
    }

    /**
     * Loads a model, as the fs command line finds it: {@code source} is a model directory (config.json,
     * *.safetensors, tokenizer.json), a .gguf file, a Hugging Face repo id (e.g. {@code Qwen/Qwen3-0.6B}) or
     * {@code repo:QUANT} for one GGUF file of a repo, downloaded into the Hugging Face cache when it is not there.
     *
     * @throws FsException with one line saying what is wrong (no such model, a corrupt file, a device too small, a
     *                     JVM started without {@code --add-modules jdk.incubator.vector} …)
     */
    public static FsModel load(String source, Options options) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(options, "options");
        JvmFlags.requireVectorModule(); // before a download, which would be wasted
        ModelSource opened = Engine.open(source, options.log());
        Tokenizer tokenizer;
        GenerationConfig defaults;
        try {
            // What can be wrong with the files is found before the weights are uploaded, which takes long.
            tokenizer = opened.tokenizer();
            defaults = opened.generationConfig();
            SamplingParams.of(defaults); // a generation_config.json no sampler takes fails here
        } catch (RuntimeException | Error e) {
            opened.close();
            throw e;
        }
        Engine.Options engine = new Engine.Options(BackendChoice.named(options.backend()).orElseThrow(), null,
                options.threads(), options.contextLength() == 0 ? null : options.contextLength(),
                "the context length", cacheType(options.cacheTypeK()), cacheType(options.cacheTypeV()),
                offload(options.backend(), options.gpuLayers(), options.cpuMoeLayers()), options.log());
        LoadedModel<Scheduler> loaded = Engine.load(opened, engine, context -> {
            Scheduler.Config slots = schedulerConfig(context, options.parallelSlots());
            return (model, cacheTypes) -> new Scheduler(model, slots, cacheTypes);
        });
        try {
            return new FsModel(loaded, tokenizer, defaults);
        } catch (RuntimeException | Error e) {
            loaded.state().close();
            loaded.close();
            throw e;
        }
    }

    /** The type {@code name} names; null (the default) for null. */
    private static KvCacheType cacheType(String name) {
        return name == null ? null : KvCacheType.parse(name);
    }

    private static Scheduler.Config schedulerConfig(int context, int parallelSlots) {
        int perSlot = context / parallelSlots;
        if (perSlot < 1) {
            throw new FsException("a context of " + context + " shared among " + parallelSlots
                    + " slots leaves none for each: raise the context length or lower the parallel slots");
        }
        return new Scheduler.Config(parallelSlots, perSlot, Math.min(Engine.PREFILL_CHUNK, perSlot), QUEUE_LIMIT);
    }

    /** A new conversation, empty but for {@code params}' system prompt. */
    public Chat newChat(ChatParams params) {
        return newChat(params, List.of());
    }

    /**
     * A new conversation that goes on from {@code history} (earlier user messages and answers, oldest first).
     *
     * @throws FsException when the model has no usable chat template, or a sampling parameter is out of range
     */
    public Chat newChat(ChatParams params, List<Message> history) {
        Objects.requireNonNull(params, "params");
        Objects.requireNonNull(history, "history");
        if (!loaded.model().hasOutputProjection()) {
            throw new FsException(loaded.source().path() + " is an embedding model (no lm_head): it embeds, not chats");
        }
        if (template == null) throw new FsException(templateProblem.getMessage(), templateProblem);
        return new Chat(this, params, params.sampling(SamplingParams.of(defaults)), history); // a fresh seed each
    }

    /**
     * The embedding of each text, in order (documents, or queries in the model card's form with
     * {@link EmbedParams#queryTask}), batched through the model between the chats' steps. The model must be an
     * embedding model (Qwen3-Embedding: a GGUF whose pooling_type is last, or a checkpoint with sentence-transformers'
     * last-token pooling or stored as a bare Qwen3Model); an input must fit {@link #contextLength} unless truncated.
     *
     * @throws FsException for a model that does not embed, no input, an empty or too long one (named by its index)
     */
    public List<Embedding> embed(List<String> texts, EmbedParams params) {
        Objects.requireNonNull(texts, "texts");
        Objects.requireNonNull(params, "params");
        List<int[]> ids = new ArrayList<>();
        for (String text : texts) {
            if (text.isEmpty()) throw new FsException("input " + ids.size() + " is empty");
            ids.add(retrieval.tokens(params.queryTask() == null ? text : Embeddings.query(params.queryTask(), text)));
        }
        return embedTokens(ids, params);
    }

    /** As {@link #embed}, of token ids embedded as given (nothing appended; {@link EmbedParams#queryTask} unused). */
    public List<Embedding> embedTokens(List<int[]> inputs, EmbedParams params) {
        int[][] fitted = retrieval.fitted(inputs, params.truncate());
        Embeddings.Options options = new Embeddings.Options(params.dimensions(), true, params.truncate());
        List<float[]> vectors = whileOpen(() -> retrieval.embed(fitted, options));
        List<Embedding> result = new ArrayList<>();
        for (int i = 0; i < fitted.length; i++) result.add(new Embedding(i, vectors.get(i), fitted[i].length));
        return List.copyOf(result);
    }

    /**
     * Each document's relevance to {@code query}, P("yes") in Qwen3-Reranker's prompt, highest first (the first
     * {@link RerankParams#topN}), batched through the model between the chats' steps. The model must have logits (a
     * causal LM, as Qwen3-Reranker ships) or be llama.cpp's reranker GGUF of one (its classifier head, the lm_head's
     * "yes" and "no" rows), not be an embedding model.
     *
     * @throws FsException for an embedding model, an empty query, no document, a prompt too long (named by index)
     */
    public List<Ranked> rerank(String query, List<String> documents, RerankParams params) {
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(documents, "documents");
        Objects.requireNonNull(params, "params");
        int[][] prompts = retrieval.prompts(params.instruction(), query, documents, params.truncate());
        double[] scores = whileOpen(() -> retrieval.scores(prompts));
        return Reranker.ranked(scores, params.topN()).stream().map(s -> new Ranked(s.index(), s.relevance())).toList();
    }

    /** What {@code run} returns; a closed model is an FsException. */
    private static <T> T whileOpen(Supplier<T> run) {
        try {
            return run.get();
        } catch (IllegalStateException e) {
            throw new FsException("the model is closed", e);
        }
    }

    /** The length of an embedding that keeps every dimension ({@link EmbedParams#dimensions} 0): the hidden size. */
    public int embeddingSize() {
        return retrieval.hiddenSize();
    }

    /** Positions each chat's history plus its answer may take: the context length shared out among the slots. */
    public int contextLength() {
        return scheduler.config().contextLength();
    }

    /** Where the model runs, e.g. "CPU (Vector API, 8 threads)". */
    public String backendDescription() {
        return loaded.description();
    }

    /** What the KV cache stores keys and values as: "f16", or "k q8_0, v f16" when they differ. */
    public String cacheTypes() {
        return loaded.cacheTypes().toString();
    }

    /**
     * Ends the answers still running (as cancelled), stops the scheduler's thread and frees the model's memory.
     * Chats of a closed model fail to send. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) return;
            closed = true;
        }
        try {
            scheduler.close();
        } finally {
            loaded.close();
        }
    }

    /** Whether {@link #close} was called (the model's memory may be gone). */
    synchronized boolean isClosed() {
        return closed;
    }

    Tokenizer tokenizer() {
        return tokenizer;
    }

    ChatTemplate template() {
        return template;
    }

    /** A constraint holding one answer to {@code gbnf}'s grammar, the model's stop tokens ending it. */
    TokenConstraint constraint(String gbnf) {
        return new GrammarConstraint(grammars.compiled(gbnf), TokenVocabulary.of(tokenizer), stopIds);
    }

    /** {@link ModelOpenedCalls}: free until the model writes {@code <tool_call>}, then held to {@code gbnf}. */
    TokenConstraint modelOpenedCalls(String gbnf, boolean thinking) {
        return ModelOpenedCalls.of(grammars.compiled(gbnf), tokenizer, stopIds, thinking);
    }

    /**
     * Queues a generation on the scheduler (see {@link Scheduler#submit}), under {@code constraint} (null: none); a
     * closed model is an FsException.
     */
    Scheduler.Handle submit(int[] prompt, SamplingParams params, int maxTokens, TokenConstraint constraint,
                            TokenSink sink) {
        try {
            return scheduler.submit(prompt, params, maxTokens, stopIds, -1, constraint, sink);
        } catch (IllegalStateException e) {
            throw new FsException("the model is closed", e);
        }
    }
}
