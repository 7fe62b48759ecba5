// @google/adk 2.0.0's RemoteA2AAgent, which speaks A2A 0.3 (through @a2a-js/sdk 0.3), against adk-cpp's A2A
// server (a2a_interop_server): an answer streamed back, a second turn in the same remote context, a failed task.
//   node adk_remote_agent.mjs BASE_URL
// Prints "PASS adk: check" or "FAIL adk: check: why" per check, then "adk a2a interop: PASS" when all pass.
import { InMemoryRunner, RemoteA2AAgent } from '@google/adk';

const base = process.argv[2];
let failures = 0;

function check(name, ok, why = '') {
  if (ok) console.log(`PASS adk: ${name}`);
  else { failures++; console.log(`FAIL adk: ${name}: ${why}`); }
}

async function turn(runner, sessionId, text) {
  const events = [];
  for await (const e of runner.runAsync({ userId: 'u', sessionId, newMessage: { role: 'user', parts: [{ text }] } }))
    events.push(e);
  return events;
}

const textOf = (e) => (e.content?.parts ?? []).map((p) => p.text ?? '').join('');

{
  const agent = new RemoteA2AAgent({ name: 'weather', agentCard: `${base}/a2a/weather/` });
  const runner = new InMemoryRunner({ agent, appName: 'adk_a2a' });
  const session = await runner.sessionService.createSession({ appName: 'adk_a2a', userId: 'u' });
  const events = await turn(runner, session.id, 'Weather in Paris?');
  const streamed = events.filter((e) => e.partial && e.customMetadata?.['a2a:response']?.kind === 'artifact-update')
    .map(textOf).join('');
  const answer = events.filter((e) => !e.partial && textOf(e)).at(-1);
  check('the answer streamed back, then whole', streamed === 'It is sunny in Paris.' &&
        textOf(answer ?? {}) === 'It is sunny in Paris.', JSON.stringify(events.map(textOf)));
  const calls = events.flatMap((e) => e.content?.parts ?? []).filter((p) => p.functionCall?.name === 'get_weather');
  check("the remote's work came too (its call)", calls.length === 1, JSON.stringify(calls));
  const again = await turn(runner, session.id, 'And tomorrow?');
  const second = again.filter((e) => !e.partial && textOf(e)).at(-1);
  const context = (e) => e?.customMetadata?.['a2a:context_id'];
  check('a second turn, in the same remote context', textOf(second ?? {}) === 'It is sunny in Paris.' &&
        context(second) && context(second) === context(answer), `${context(answer)} ${context(second)}`);
}
{
  const agent = new RemoteA2AAgent({ name: 'broken', agentCard: `${base}/a2a/broken/` });
  const runner = new InMemoryRunner({ agent, appName: 'adk_a2a' });
  const session = await runner.sessionService.createSession({ appName: 'adk_a2a', userId: 'u' });
  const events = await turn(runner, session.id, 'Hello?');
  check('a failed remote task: an error, no answer',
        events.some((e) => (e.errorMessage ?? '').includes('overloaded')) && !events.some((e) => !e.partial && textOf(e)),
        JSON.stringify(events.map((e) => [textOf(e), e.errorMessage])));
}

if (failures) {
  console.log(`adk a2a interop: ${failures} FAILED`);
  process.exit(1);
}
console.log('adk a2a interop: PASS');
