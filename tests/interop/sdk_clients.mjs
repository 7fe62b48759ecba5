// The official SDKs from the npm registry parse what tools/mock-llm streams: text, tool calls, usage,
// HTTP errors and errors inside a 200 stream, for Gemini (@google/genai), OpenAI (openai) and Anthropic
// (@anthropic-ai/sdk).
//   node sdk_clients.mjs SCRIPT_URL ERROR_URL BROKEN_URL
// SCRIPT_URL serves tools/mock-llm --script with turns [get_weather call, streamed text]; ERROR_URL answers
// every request with HTTP 400; BROKEN_URL streams "Hel" then an error event (stream_error).
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';

const [base, errorBase, brokenBase] = process.argv.slice(2);
const answer = 'It is sunny and 22 degrees in Paris (from mock-llm).';
let passed = 0;
let failed = 0;
function check(condition, what, detail = '') {
  if (condition) {
    passed++;
    console.log(`ok   ${what}`);
  } else {
    failed++;
    console.log(`FAIL ${what} ${detail}`);
  }
}
async function rejects(promiseFn, what, test) {
  try {
    await promiseFn();
    check(false, what, '(no error)');
  } catch (e) {
    check(test(e), what, `(${e && e.constructor && e.constructor.name}: ${e && e.message})`);
  }
}

// ---- Gemini ----
{
  const ai = (url) => new GoogleGenAI({ apiKey: 'test', httpOptions: { baseUrl: url } });
  const genai = ai(base);
  const first = await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Weather in Paris?' });
  const call = first.functionCalls?.[0];
  check(call?.name === 'get_weather' && call?.args?.city === 'Paris', 'gemini: a function call', JSON.stringify(first));

  const history = [
    { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
    { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { sky: 'sunny' } } }] },
  ];
  let text = '';
  let chunks = 0;
  let usage;
  let finish;
  for await (const chunk of await genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: history })) {
    chunks++;
    text += chunk.candidates?.[0]?.content?.parts?.map((p) => p.text ?? '').join('') ?? '';
    usage = chunk.usageMetadata ?? usage;
    finish = chunk.candidates?.[0]?.finishReason ?? finish;
  }
  check(text === answer && chunks === 5, 'gemini: a streamed answer in 5 chunks', `${chunks}: ${text}`);
  check(usage?.totalTokenCount > 0 && finish === 'STOP', 'gemini: usage and finish reason', JSON.stringify(usage));

  await rejects(() => ai(errorBase).models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' }),
    'gemini: HTTP 400 is an error with its status', (e) => String(e.status ?? e.message).includes('400'));
  await rejects(async () => {
    for await (const chunk of await ai(brokenBase).models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'x' })) {
      void chunk;
    }
  }, 'gemini: an error inside the stream is raised', (e) => String(e.message).includes('overloaded now'));
}

// ---- OpenAI ----
{
  const client = (url) => new OpenAI({ apiKey: 'test', baseURL: `${url}/v1`, maxRetries: 0 });
  const openai = client(base);
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const runner = openai.chat.completions.stream({
    model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools,
  });
  const final = await runner.finalChatCompletion();
  const call = final.choices[0]?.message?.tool_calls?.[0];
  check(call?.function?.name === 'get_weather' && JSON.parse(call.function.arguments).city === 'Paris' &&
        final.choices[0].finish_reason === 'tool_calls', 'openai: a tool call assembled from its deltas', JSON.stringify(final));

  const stream = await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: call?.id ?? 'c', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: call?.id ?? 'c', content: '{"sky":"sunny"}' },
    ],
    tools, stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let usage;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    usage = chunk.usage ?? usage;
  }
  check(text === answer, 'openai: a streamed answer', text);
  check(usage?.total_tokens > 0, 'openai: usage in the last chunk', JSON.stringify(usage));

  await rejects(() => client(errorBase).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    'openai: HTTP 400 is an APIError with its status', (e) => e.status === 400);
  await rejects(async () => {
    const s = await client(brokenBase).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true });
    for await (const chunk of s) void chunk;
  }, 'openai: an error event inside the stream is raised', (e) => String(e.message).includes('overloaded now'));
}

// ---- Anthropic ----
{
  const client = (url) => new Anthropic({ apiKey: 'test', baseURL: url, maxRetries: 0 });
  const anthropic = client(base);
  const tools = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
  const first = await anthropic.messages.stream({
    model: 'claude-mock', max_tokens: 100, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools,
  }).finalMessage();
  const use = first.content.find((b) => b.type === 'tool_use');
  check(use?.name === 'get_weather' && use?.input?.city === 'Paris' && first.stop_reason === 'tool_use',
    'anthropic: a tool_use block assembled from input_json_delta', JSON.stringify(first));

  let text = '';
  const second = anthropic.messages.stream({
    model: 'claude-mock', max_tokens: 100, tools,
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: use?.id ?? 't', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use?.id ?? 't', content: '{"sky":"sunny"}' }] },
    ],
  });
  second.on('text', (delta) => { text += delta; });
  const message = await second.finalMessage();
  check(text === answer && message.stop_reason === 'end_turn', 'anthropic: a streamed answer', text);
  check(message.usage?.output_tokens > 0 && message.usage?.input_tokens > 0, 'anthropic: usage', JSON.stringify(message.usage));

  await rejects(() => client(errorBase).messages.create({ model: 'claude-mock', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    'anthropic: HTTP 400 is an APIError with its status', (e) => e.status === 400);
  await rejects(() => client(brokenBase).messages.stream({ model: 'claude-mock', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).finalMessage(),
    'anthropic: an error event inside the stream is raised', (e) => String(e.message).includes('overloaded now'));
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
