package fs.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.chat.ChatMessage;
import fs.generate.SamplingParams;
import java.util.List;
import org.junit.jupiter.api.Test;

class CompletionRequestTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text.replace('\'', '"'));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static ApiException chatRefused(String body) {
        return assertThrows(ApiException.class, () -> CompletionRequest.chat(json(body)));
    }

    @Test
    void readsAChatRequestWithEveryFieldItUses() {
        CompletionRequest request = CompletionRequest.chat(json("{'model':'m','messages':["
                + "{'role':'developer','content':'Be brief.'},{'role':'user','content':[{'type':'text','text':'Hi'},"
                + "{'type':'text','text':' there'}]},{'role':'assistant','content':null,'reasoning_content':'hm'},"
                + "{'role':'user','content':'Again'}],"
                + "'stream':true,'stream_options':{'include_usage':true},'max_tokens':9,'max_completion_tokens':7,"
                + "'temperature':0.5,'top_p':0.9,'top_k':5,'min_p':0.1,'repeat_penalty':1.1,'seed':42,"
                + "'stop':['a','','b'],'n':1,'logprobs':false,'presence_penalty':0,"
                + "'chat_template_kwargs':{'enable_thinking':false},'unknown_field':{'ignored':true}}"));
        assertEquals("m", request.model());
        CompletionRequest.Prompt.Chat chat = (CompletionRequest.Prompt.Chat) request.prompt();
        assertEquals(List.of(new ChatMessage("system", "Be brief.", null, List.of()),
                new ChatMessage("user", "Hi there", null, List.of()),
                new ChatMessage("assistant", "", "hm", List.of()),
                new ChatMessage("user", "Again", null, List.of())), chat.messages());
        assertEquals(Boolean.FALSE, chat.enableThinking());
        assertTrue(request.stream());
        assertTrue(request.includeUsage());
        assertEquals(7, request.maxTokens(), "max_completion_tokens wins over the older max_tokens");
        assertEquals(List.of("a", "b"), request.stop(), "an empty stop string would stop at once: it is dropped");
        SamplingParams params = request.sampling().over(SamplingParams.greedy());
        assertEquals(new SamplingParams(0.5f, 5, 0.9f, 0.1f, 1.1f, 42L), params);
    }

    @Test
    void leftOutFieldsKeepTheDefaults() {
        CompletionRequest request = CompletionRequest.completion(json("{'prompt':'Once'}"));
        assertNull(request.model());
        assertEquals("Once", ((CompletionRequest.Prompt.Text) request.prompt()).text());
        assertFalse(request.stream());
        assertEquals(-1, request.maxTokens());
        SamplingParams defaults = new SamplingParams(0.6f, 20, 0.95f, 0f, 1f, 3L);
        assertEquals(defaults, request.sampling().over(defaults));
    }

    @Test
    void aTextPromptMayBeTokenIds() {
        CompletionRequest request = CompletionRequest.completion(json("{'prompt':[1,2,3]}"));
        assertArrayEquals(new int[] {1, 2, 3}, ((CompletionRequest.Prompt.Tokens) request.prompt()).ids());
    }

    @Test
    void wrongTypesAreNamedWithTheField() {
        ApiException e = chatRefused("{'messages':[{'role':'user','content':'x'}],'temperature':'hot'}");
        assertEquals(400, e.status);
        assertEquals("invalid_type", e.code);
        assertEquals("temperature", e.param);
        assertEquals("invalid type for 'temperature': expected a number, but got a string instead", e.getMessage());
        assertEquals("max_tokens", chatRefused("{'messages':[{'role':'user','content':'x'}],'max_tokens':1.5}").param);
        assertEquals("messages[0].content",
                chatRefused("{'messages':[{'role':'user','content':5}]}").param);
        assertEquals("stream", chatRefused("{'messages':[{'role':'user','content':'x'}],'stream':'yes'}").param);
        assertEquals("messages", chatRefused("{'messages':{}}").param);
    }

    @Test
    void valuesTheServerCannotHonourAreRefusedClearly() {
        String ok = "{'messages':[{'role':'user','content':'x'}],";
        assertEquals("unsupported_value", chatRefused(ok + "'n':2}").code);
        assertEquals("functions", chatRefused(ok + "'functions':[{'name':'f'}]}").param);
        assertEquals("response_format.type", chatRefused(ok + "'response_format':{'type':'xml'}}").param);
        assertEquals("messages[0].role", chatRefused("{'messages':[{'role':'function','content':'x'}]}").param);
        assertEquals("messages[0].content[0].type",
                chatRefused("{'messages':[{'role':'user','content':[{'type':'image_url'}]}]}").param);
        assertEquals("max_tokens", chatRefused(ok + "'max_tokens':0}").param);
        assertEquals("messages", chatRefused("{'messages':[]}").param);
        assertEquals("messages", chatRefused("{}").param);
    }

    @Test
    void logprobsAskForTheChosenTokenAndTopLogprobsForAlternatives() {
        String ok = "{'messages':[{'role':'user','content':'x'}],";
        assertEquals(-1, CompletionRequest.chat(json(ok + "'logprobs':false}")).topLogprobs());
        assertEquals(-1, CompletionRequest.chat(json(ok + "'stream':false}")).topLogprobs());
        assertEquals(0, CompletionRequest.chat(json(ok + "'logprobs':true}")).topLogprobs());
        assertEquals(20, CompletionRequest.chat(json(ok + "'logprobs':true,'top_logprobs':20}")).topLogprobs());
        assertEquals(0, CompletionRequest.chat(json(ok + "'logprobs':true,'top_logprobs':null}")).topLogprobs());

        ApiException without = chatRefused(ok + "'top_logprobs':3}");
        assertEquals("top_logprobs", without.param);
        assertEquals(400, without.status);
        assertTrue(without.getMessage().contains("'logprobs': true"), without.getMessage());
        assertEquals("top_logprobs", chatRefused(ok + "'logprobs':false,'top_logprobs':0}").param);
        for (String bad : List.of("21", "-1")) {
            ApiException range = chatRefused(ok + "'logprobs':true,'top_logprobs':" + bad + "}");
            assertEquals("top_logprobs", range.param);
            assertEquals("invalid_value", range.code);
            assertTrue(range.getMessage().contains("0..20"), range.getMessage());
        }
        assertEquals("invalid_type", chatRefused(ok + "'logprobs':1}").code);
        assertEquals("invalid_type", chatRefused(ok + "'logprobs':true,'top_logprobs':2.5}").code);

        // Text completions: logprobs is the number of alternatives.
        assertEquals(-1, CompletionRequest.completion(json("{'prompt':'a'}")).topLogprobs());
        assertEquals(0, CompletionRequest.completion(json("{'prompt':'a','logprobs':0}")).topLogprobs());
        assertEquals(5, CompletionRequest.completion(json("{'prompt':'a','logprobs':5}")).topLogprobs());
        assertEquals(20, CompletionRequest.completion(json("{'prompt':'a','logprobs':20}")).topLogprobs());
        for (String bad : List.of("21", "-1")) {
            ApiException range = assertThrows(ApiException.class,
                    () -> CompletionRequest.completion(json("{'prompt':'a','logprobs':" + bad + "}")));
            assertEquals("logprobs", range.param);
            assertEquals(400, range.status);
        }
        assertEquals("logprobs", assertThrows(ApiException.class,
                () -> CompletionRequest.completion(json("{'prompt':'a','logprobs':true}"))).param);
    }

    @Test
    void presenceAndFrequencyPenaltiesAreReadInOpenAisRange() {
        String ok = "{'messages':[{'role':'user','content':'x'}],";
        SamplingParams params = CompletionRequest.chat(json(ok + "'presence_penalty':0.5,'frequency_penalty':-2}"))
                .sampling().over(SamplingParams.greedy());
        assertEquals(0.5f, params.presencePenalty());
        assertEquals(-2f, params.frequencyPenalty());
        SamplingParams text = CompletionRequest.completion(json("{'prompt':'a','frequency_penalty':2}")).sampling()
                .over(SamplingParams.greedy());
        assertEquals(new SamplingParams(0f, 0, 1f, 0f, 1f, 0f, 2f, 0L), text);
        for (String field : List.of("presence_penalty", "frequency_penalty")) {
            for (String bad : List.of("3", "-2.5")) {
                ApiException e = chatRefused(ok + "'" + field + "':" + bad + "}");
                assertEquals(field, e.param);
                assertEquals(400, e.status);
                assertTrue(e.getMessage().contains("[-2, 2]") && e.getMessage().contains(bad), e.getMessage());
            }
            assertEquals(field, chatRefused(ok + "'" + field + "':1e39}").param, "beyond a float is out of range too");
            assertEquals("invalid_type", chatRefused(ok + "'" + field + "':'high'}").code);
        }
    }

    @Test
    void aSamplingValueNoSamplerTakesIsA400() {
        CompletionRequest request = CompletionRequest.chat(json("{'messages':[{'role':'user','content':'x'}],"
                + "'top_p':0}"));
        ApiException e = assertThrows(ApiException.class, () -> request.sampling().over(SamplingParams.greedy()));
        assertEquals(400, e.status);
        assertTrue(e.getMessage().contains("top-p"), e.getMessage());
    }
}
