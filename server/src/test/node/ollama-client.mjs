// Drives Ollama's official JavaScript client (the version package.json pins) against a live fs serve and prints what
// came back as one JSON object, for OllamaClientTest and OllamaToolsTest to check.
//   node ollama-client.mjs BASE_URL answers MODEL QUESTION MAX_TOKENS RAW_PROMPT
//   node ollama-client.mjs BASE_URL tools MODEL
//   node ollama-client.mjs BASE_URL embed MODEL TEXTS_AS_JSON
import { Ollama } from 'ollama';

const [base, mode, model, ...rest] = process.argv.slice(2);
const ollama = new Ollama({ host: base });

async function collect(stream) {
  const pieces = [];
  for await (const piece of stream) pieces.push(piece);
  return pieces;
}

async function failure(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    return { status: e.status_code ?? null, message: e.error ?? e.message };
  }
}

async function answers(question, maxTokens, rawPrompt) {
  const options = { temperature: 0, num_predict: Number(maxTokens) };
  const messages = [{ role: 'user', content: question }];
  const out = {};
  out.chat = await ollama.chat({ model, messages, options });
  out.chatStream = await collect(await ollama.chat({ model, messages, options, stream: true }));
  out.generate = await ollama.generate({ model, prompt: question, options });
  out.generateStream = await collect(await ollama.generate({ model, prompt: question, options, stream: true }));
  out.raw = await ollama.generate({ model, prompt: rawPrompt, raw: true, options });
  const person = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 8 }, age: { type: 'integer' } },
    required: ['name', 'age'],
  };
  out.format = await ollama.chat({
    model, messages: [{ role: 'user', content: 'A person as JSON' }], format: person,
    options: { temperature: 0, num_predict: 60 },
  });
  out.tags = await ollama.list();
  out.ps = await ollama.ps();
  out.show = await ollama.show({ model });
  out.version = await ollama.version();
  out.unknownModel = await failure(ollama.chat({ model: 'no-such-model', messages }));
  out.tooLargeContext = await failure(ollama.chat({ model, messages, options: { num_ctx: 1 << 20 } }));
  return out;
}

async function tools() {
  const weather = {
    type: 'function',
    function: {
      name: 'get_weather', description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  };
  const question = { role: 'user', content: 'Weather in Paris?' };
  const out = {};
  out.call = await ollama.chat({ model, messages: [question], tools: [weather] });
  out.callStream = await collect(await ollama.chat({ model, messages: [question], tools: [weather], stream: true }));
  const result = { role: 'tool', content: 'sunny', tool_name: 'get_weather' };
  out.afterResult = await ollama.chat({ model, messages: [question, out.call.message, result], tools: [weather] });
  return out;
}

async function embed(texts) {
  const input = JSON.parse(texts);
  return {
    embed: await ollama.embed({ model, input }),
    embeddings: await ollama.embeddings({ model, prompt: input[0] }),
    show: await ollama.show({ model }),
  };
}

const modes = { answers, tools, embed };
const out = await modes[mode](...rest);
console.log(JSON.stringify(out));
