// Drives Anthropic's official TypeScript SDK (@anthropic-ai/sdk, the version package.json pins) against fs serve.
// node anthropic-client.mjs BASE_URL API_KEY MODE PARAMS_JSON; prints one JSON object for the Java test to check:
//   create     the message client.messages.create(PARAMS) returns
//   stream     client.messages.stream(PARAMS): the events' types in order (a delta's with its delta type), the text
//              pieces, and the final message the SDK accumulated from them
//   count      client.messages.countTokens(PARAMS)
//   roundtrip  create(PARAMS), then create again with its content as the assistant turn and, for each tool_use
//              block, a tool_result "result of NAME"; prints {first, second}
// An API error prints {error: {class, status, type, message}} (and exits 0): the SDK's error class and what it read.
import Anthropic from '@anthropic-ai/sdk';

const [baseURL, apiKey, mode, paramsJson] = process.argv.slice(2);
const params = JSON.parse(paramsJson);
const client = new Anthropic({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });

async function run() {
  switch (mode) {
    case 'create':
      return client.messages.create(params);
    case 'stream': {
      const events = [];
      const pieces = [];
      const stream = client.messages.stream(params);
      stream.on('streamEvent', (event) => {
        events.push(event.type === 'content_block_delta' ? `${event.type}:${event.delta.type}` : event.type);
      });
      stream.on('text', (piece) => pieces.push(piece));
      const message = await stream.finalMessage();
      return { events, pieces, message };
    }
    case 'count':
      return client.messages.countTokens(params);
    case 'roundtrip': {
      const first = await client.messages.create(params);
      const results = first.content.filter((block) => block.type === 'tool_use').map((block) => ({
        type: 'tool_result', tool_use_id: block.id, content: `result of ${block.name}`,
      }));
      const second = await client.messages.create({
        ...params,
        messages: [...params.messages, { role: 'assistant', content: first.content }, { role: 'user', content: results }],
      });
      return { first, second };
    }
    default:
      throw new Error(`unknown mode ${mode}`);
  }
}

try {
  console.log(JSON.stringify(await run()));
} catch (error) {
  if (!(error instanceof Anthropic.APIError)) throw error;
  console.log(JSON.stringify({
    error: {
      class: error.constructor.name, status: error.status ?? null, type: error.error?.error?.type ?? null,
      message: error.error?.error?.message ?? error.message,
    },
  }));
}
