// The official openai npm client's Responses API against a live fs serve: node responses-client.mjs BASE_URL MODEL
// QUESTION INSTRUCTIONS TOOL_JSON MAX_TOKENS. Prints one JSON object with what each call came to, for
// ResponsesApiTest to assert on.
import OpenAI from 'openai';

const [baseURL, model, question, instructions, toolJson, maxTokens] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
const tool = JSON.parse(toolJson);
const limit = Number(maxTokens);
const result = {};

// A text answer, whole.
const text = await client.responses.create({
  model, instructions, input: question, max_output_tokens: limit, temperature: 0, store: false,
});
result.text = {
  outputText: text.output_text, status: text.status, incompleteDetails: text.incomplete_details,
  usage: text.usage, id: text.id, object: text.object, outputTypes: text.output.map((item) => item.type),
};

// The same answer streamed: its events in order, the text deltas and the response the last event carries.
const stream = await client.responses.create({
  model, instructions, input: question, max_output_tokens: limit, temperature: 0, stream: true,
});
const types = [];
const sequence = [];
let deltas = '';
let last = null;
for await (const event of stream) {
  types.push(event.type);
  sequence.push(event.sequence_number);
  if (event.type === 'response.output_text.delta') deltas += event.delta;
  if (event.response) last = event.response;
}
const message = last.output.find((item) => item.type === 'message');
result.stream = {
  types, sequence, deltas, status: last.status, finalText: message ? message.content[0].text : null,
};

// A function call (the only one the tool's schema allows), then its output sent back with the call.
const question2 = 'Weather in Paris?';
const call = await client.responses.create({
  model, input: question2, tools: [tool], tool_choice: { type: 'function', name: tool.name }, parallel_tool_calls: false,
  reasoning: { effort: 'minimal' }, max_output_tokens: 40, temperature: 0,
});
const calls = call.output.filter((item) => item.type === 'function_call');
const answer = await client.responses.create({
  model,
  input: [
    { role: 'user', content: question2 },
    ...call.output,
    { type: 'function_call_output', call_id: calls[0].call_id, output: 'sunny' },
  ],
  tools: [tool], reasoning: { effort: 'minimal' }, max_output_tokens: limit, temperature: 0,
});
result.toolCall = {
  status: call.status,
  calls: calls.map((item) => ({ name: item.name, arguments: item.arguments, callId: item.call_id, id: item.id })),
  answerText: answer.output_text,
  answerTypes: answer.output.map((item) => item.type),
};

// Structured output: a JSON schema's answer.
const structured = await client.responses.create({
  model, input: 'Is the sky blue?', reasoning: { effort: 'minimal' }, max_output_tokens: 40, temperature: 0,
  text: {
    format: {
      type: 'json_schema', name: 'answer', strict: true,
      schema: {
        type: 'object', properties: { answer: { type: 'string', enum: ['yes', 'no'] } },
        required: ['answer'], additionalProperties: false,
      },
    },
  },
});
result.structured = { status: structured.status, outputText: structured.output_text };

// A previous response: none is kept, so the client gets the API's error.
try {
  await client.responses.create({ model, input: 'And then?', previous_response_id: text.id });
  result.previous = { status: 200 };
} catch (error) {
  result.previous = { status: error.status, type: error.type, code: error.code, param: error.param,
    message: error.message };
}

console.log(JSON.stringify(result));
