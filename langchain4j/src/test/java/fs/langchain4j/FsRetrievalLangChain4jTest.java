package fs.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.output.Response;
import dev.langchain4j.rag.content.Content;
import dev.langchain4j.rag.content.ContentMetadata;
import dev.langchain4j.rag.content.aggregator.ReRankingContentAggregator;
import dev.langchain4j.rag.content.retriever.EmbeddingStoreContentRetriever;
import dev.langchain4j.rag.query.Query;
import dev.langchain4j.store.embedding.inmemory.InMemoryEmbeddingStore;
import fs.api.EmbedParams;
import fs.api.FsModel;
import fs.api.RerankParams;
import fs.model.Golden;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An in-memory retrieval end to end with LangChain4j's own parts over fs: documents of models/tiny-embed-heldout's
 * golden embedded by {@link FsEmbeddingModel} into an {@link InMemoryEmbeddingStore}, the golden query (as a query, in
 * the model card's instruct form) retrieved by an {@link EmbeddingStoreContentRetriever}, in the order of the float64
 * reference's cosines; and models/tiny-rerank-heldout's documents re-scored by {@link FsScoringModel}, alone and in a
 * {@link ReRankingContentAggregator}, in the order and with the scores of the reference's P(yes).
 */
class FsRetrievalLangChain4jTest {
    /** The logit goldens' tolerance, for a cosine or a probability. */
    private static final double TOLERANCE = 1e-3;
    private static final ObjectMapper JSON = new ObjectMapper();

    private static FsModel embedder;
    private static FsModel reranker;

    @BeforeAll
    static void load() {
        FsModel.Options options = FsModel.Options.defaults().withBackend("java").withThreads(2)
                .withContextLength(256);
        embedder = FsModel.load(Golden.modelDir("tiny-embed-heldout").toString(), options);
        reranker = FsModel.load(Golden.modelDir("tiny-rerank-heldout").toString(), options);
    }

    @AfterAll
    static void close() {
        if (embedder != null) embedder.close();
        if (reranker != null) reranker.close();
    }

    private static JsonNode golden(String checkpoint, String file) throws IOException {
        return JSON.readTree(Golden.modelDir(checkpoint).resolve("golden").resolve(file).toFile());
    }

    @Test
    void theRetrieverFindsTheDocumentsInTheReferencesOrder() throws IOException {
        JsonNode golden = golden("tiny-embed-heldout", "embedding.json");
        String task = golden.get("task").asText();
        List<JsonNode> documents = new ArrayList<>();
        JsonNode query = null;
        for (JsonNode c : golden.get("cases")) {
            if (c.get("kind").asText().equals("document")) documents.add(c);
            else query = c;
        }
        String instructed = query.get("text").asText();
        String question = instructed.substring(instructed.indexOf("\nQuery:") + "\nQuery:".length());
        assertEquals(instructed, "Instruct: " + task + "\nQuery:" + question, "the golden query's form");
        // The reference's cosines of each document with the query: what the store must rank by.
        double[] cosines = new double[documents.size()];
        for (int i = 0; i < cosines.length; i++) cosines[i] = dot(documents.get(i).get("vector"), query.get("vector"));
        List<Integer> expected = IntStream.range(0, cosines.length).boxed()
                .sorted(Comparator.comparingDouble(i -> -cosines[i])).toList();

        FsEmbeddingModel documentModel = new FsEmbeddingModel(embedder, EmbedParams.defaults());
        FsEmbeddingModel queryModel = new FsEmbeddingModel(embedder, EmbedParams.defaults().withQueryTask(task));
        assertEquals(embedder.embeddingSize(), documentModel.dimension());
        assertEquals(golden.get("cases").get(0).get("vector").size(), documentModel.dimension());

        InMemoryEmbeddingStore<TextSegment> store = new InMemoryEmbeddingStore<>();
        List<TextSegment> segments = documents.stream().map(d -> TextSegment.from(d.get("text").asText())).toList();
        Response<List<Embedding>> embedded = documentModel.embedAll(segments);
        assertEquals(documents.stream().mapToInt(d -> d.get("ids").size()).sum(),
                embedded.tokenUsage().inputTokenCount(), "the tokens run, each text's appended one included");
        store.addAll(embedded.content(), segments);

        EmbeddingStoreContentRetriever retriever = EmbeddingStoreContentRetriever.builder().embeddingStore(store)
                .embeddingModel(queryModel).maxResults(documents.size()).build();
        List<Content> found = retriever.retrieve(Query.from(question));
        assertEquals(documents.size(), found.size());
        for (int rank = 0; rank < found.size(); rank++) {
            int document = expected.get(rank);
            assertEquals(segments.get(document).text(), found.get(rank).textSegment().text(), "rank " + rank);
            // InMemoryEmbeddingStore's score is the cosine mapped to 0..1
            double score = (Double) found.get(rank).metadata().get(ContentMetadata.SCORE);
            assertEquals((cosines[document] + 1) / 2, score, TOLERANCE, "rank " + rank + "'s score");
        }
    }

    @Test
    void theScoringModelScoresInInputOrderAndReRanksAsTheReference() throws IOException {
        JsonNode cases = golden("tiny-rerank-heldout", "rerank.json").get("cases");
        String query = cases.get(0).get("query").asText();
        String instruction = cases.get(0).get("instruction").asText();
        List<JsonNode> pairs = new ArrayList<>();
        for (JsonNode c : cases) {
            boolean sameQuery = c.get("query").asText().equals(query);
            if (sameQuery && c.get("instruction").asText().equals(instruction)) pairs.add(c);
        }
        assertTrue(pairs.size() >= 3, "documents to order");
        List<TextSegment> segments = pairs.stream().map(p -> TextSegment.from(p.get("document").asText())).toList();
        FsScoringModel scoring = new FsScoringModel(reranker, RerankParams.defaults().withInstruction(instruction)
                .withTopN(1));
        List<Double> scores = scoring.scoreAll(segments, query).content();
        assertEquals(pairs.size(), scores.size(), "every segment, whatever topN says");
        for (int i = 0; i < pairs.size(); i++) {
            assertEquals(pairs.get(i).get("p_yes").asDouble(), scores.get(i), TOLERANCE, "segment " + i);
        }

        ReRankingContentAggregator aggregator = ReRankingContentAggregator.builder().scoringModel(scoring).build();
        List<Content> contents = segments.stream().map(Content::from).toList();
        List<Content> reRanked = aggregator.aggregate(Map.of(Query.from(query), List.of(contents)));
        List<String> expected = IntStream.range(0, pairs.size()).boxed()
                .sorted(Comparator.comparingDouble(i -> -pairs.get(i).get("p_yes").asDouble()))
                .map(i -> segments.get(i).text()).toList();
        assertEquals(expected, reRanked.stream().map(c -> c.textSegment().text()).toList());
    }

    private static double dot(JsonNode a, JsonNode b) {
        double sum = 0;
        for (int i = 0; i < a.size(); i++) sum += a.get(i).asDouble() * b.get(i).asDouble();
        return sum;
    }
}
