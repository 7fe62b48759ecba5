// Checks what otlp_receiver.mjs decoded from otlp_export_client's run: each session's spans in one trace, nested as
// the agents ran, named and attributed as ADK names them, failures as errors; and the metrics of those runs.
//   node otlp_check.mjs SPANS_FILE ENCODING CONTENT(true|false)
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';

const [file, encoding, content] = process.argv.slice(2);
const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
for (const l of lines) assert.equal(l.error, undefined, 'the receiver failed to decode a request: ' + l.error);
const spans = lines.filter((l) => !l.metric);
const metrics = lines.filter((l) => l.metric);
assert.ok(spans.length > 0, 'no span arrived');
for (const s of spans) {
  assert.equal(s.encoding, encoding);
  assert.equal(s.resource['service.name'], 'otlp-interop');
  assert.equal(s.resource['telemetry.sdk.language'], 'cpp');
  assert.equal(s.scope, 'gcp.vertex.agent');
  assert.match(s.traceId, /^[0-9a-f]{32}$/);
  assert.match(s.spanId, /^[0-9a-f]{16}$/);
  assert.ok(BigInt(s.end) >= BigInt(s.start), s.name + ' ends before it starts');
  assert.equal((s.flags & 0x1), 1, 'sampled');
}

// The spans of a session: those of the traces whose invoke_agent spans name it.
function session(id) {
  const traces = new Set(spans.filter((s) => s.attributes['gen_ai.conversation.id'] === id).map((s) => s.traceId));
  assert.equal(traces.size, 1, `session ${id}: one trace, not ${traces.size}`);
  const mine = spans.filter((s) => traces.has(s.traceId));
  const byId = new Map(mine.map((s) => [s.spanId, s]));
  const one = (name) => {
    const found = mine.filter((s) => s.name === name);
    assert.equal(found.length, 1, `session ${id}: one span "${name}", found ${found.length}`);
    return found[0];
  };
  const parentOf = (s) => byId.get(s.parentSpanId);
  for (const s of mine)
    if (s.name !== 'invocation') assert.ok(parentOf(s), `session ${id}: the parent of "${s.name}" is in the trace`);
  assert.equal(one('invocation').parentSpanId, '', `session ${id}: the invocation is the root`);
  return { mine, one, parentOf };
}

{
  const { mine, one, parentOf } = session('transfer');
  const names = mine.map((s) => s.name).sort();
  assert.deepEqual(names, ['call_llm', 'call_llm', 'call_llm', 'execute_tool get_weather',
    'execute_tool transfer_to_agent', 'generate_content gemini-2.5-flash', 'generate_content gemini-2.5-flash',
    'generate_content gemini-2.5-pro', 'invocation', 'invoke_agent coordinator', 'invoke_agent weather_agent']);
  const coordinator = one('invoke_agent coordinator');
  const weather = one('invoke_agent weather_agent');
  assert.equal(parentOf(coordinator).name, 'invocation');
  assert.equal(parentOf(weather).name, 'invoke_agent coordinator', 'the agent transferred to runs inside the coordinator');
  assert.equal(coordinator.attributes['gen_ai.operation.name'], 'invoke_agent');
  assert.equal(coordinator.attributes['gen_ai.agent.description'], 'Sends each question to the agent that knows.');
  const tool = one('execute_tool get_weather');
  assert.equal(parentOf(tool), weather);
  assert.equal(tool.kind, 1);
  assert.equal(tool.attributes['gen_ai.operation.name'], 'execute_tool');
  assert.equal(tool.attributes['gen_ai.tool.name'], 'get_weather');
  assert.ok(tool.attributes['gen_ai.tool.call.id']);
  assert.equal(one('execute_tool transfer_to_agent').attributes['gen_ai.agent.name'], 'coordinator');
  const inference = one('generate_content gemini-2.5-pro');
  assert.equal(inference.kind, 3, 'an inference is a client span');
  assert.equal(parentOf(inference).name, 'call_llm');
  assert.equal(inference.attributes['gen_ai.request.model'], 'gemini-2.5-pro');
  for (const s of mine) assert.equal(s.status.code, 0, `${s.name} did not fail`);
  const calls = mine.filter((s) => s.name === 'call_llm');
  for (const c of calls) {
    assert.ok(c.attributes['gcp.vertex.agent.event_id']);
    if (content === 'true') {
      assert.ok(JSON.parse(c.attributes['gcp.vertex.agent.llm_request']).contents.length > 0, 'the request, as asked');
    } else {
      assert.equal(c.attributes['gcp.vertex.agent.llm_request'], undefined, 'no content unless asked');
    }
  }
  if (content === 'true')
    assert.equal(JSON.parse(tool.attributes['gcp.vertex.agent.tool_response']).sky, 'sunny');
  else
    assert.equal(tool.attributes['gcp.vertex.agent.tool_response'], undefined);
}
{
  const { mine, one } = session('error');
  assert.deepEqual(mine.map((s) => s.name).sort(),
    ['call_llm', 'generate_content gemini-2.5-flash', 'invocation', 'invoke_agent failing']);
  for (const s of mine) {
    assert.equal(s.status.code, 2, `${s.name} is an error`);
    assert.equal(s.attributes['error.type'], 'bad_response');
  }
  assert.match(one('generate_content gemini-2.5-flash').status.message, /nonsense/);
}
{
  const { mine } = session('cancel');
  assert.deepEqual(mine.map((s) => s.name).sort(),
    ['call_llm', 'generate_content gemini-2.5-flash', 'invocation', 'invoke_agent slow']);
  for (const s of mine) {
    assert.equal(s.status.code, 2, `${s.name} ended as cancelled`);
    assert.ok(s.attributes['error.type'], `${s.name} says why`);
  }
}
{
  // The metrics: one export at the end, cumulative, counting what the spans show.
  const named = (name) => {
    const found = metrics.filter((m) => m.name === name);
    assert.ok(found.length >= 1, `the metric ${name} arrived`);
    const last = found[found.length - 1];
    assert.equal(last.encoding, encoding);
    assert.equal(last.resource['service.name'], 'otlp-interop');
    assert.equal(last.scope, 'gcp.vertex.agent');
    return last;
  };
  const points = (m, match) => m.points.filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v));
  const count = (m, match) => points(m, match).reduce((n, p) => n + p.count, 0);

  const operations = named('gen_ai.client.operation.duration');
  assert.equal(operations.kind, 'histogram');
  assert.equal(operations.unit, 's');
  assert.equal(operations.temporality, 2, 'cumulative');
  for (const p of operations.points) {
    assert.equal(p.bucketCounts.length, p.explicitBounds.length + 1);
    assert.equal(p.bucketCounts.reduce((a, b) => a + b, 0), p.count, 'the buckets add up to the count');
    assert.ok(BigInt(p.time) >= BigInt(p.start));
    assert.ok(p.min <= p.max);
  }
  // Five model calls: three of the transfer, the refused one, the cancelled one.
  assert.equal(count(operations, { 'gen_ai.operation.name': 'generate_content' }), 5);
  assert.equal(count(operations, { 'gen_ai.request.model': 'gemini-2.5-pro' }), 1);
  assert.equal(count(operations, { 'error.type': 'bad_response' }), 1);
  const tools = named('gen_ai.execute_tool.duration');
  assert.equal(count(tools, { 'gen_ai.tool.name': 'get_weather' }), 1);
  assert.equal(count(tools, { 'gen_ai.tool.name': 'transfer_to_agent' }), 1);
  const agents = named('gen_ai.invoke_agent.duration');
  assert.equal(count(agents, { 'gen_ai.agent.name': 'coordinator' }), 1);
  assert.equal(count(agents, { 'gen_ai.agent.name': 'weather_agent' }), 1);
  assert.equal(count(agents, { 'gen_ai.agent.name': 'failing', 'error.type': 'bad_response' }), 1);
  const active = named('adk.invocations.active');
  assert.equal(active.kind, 'sum');
  assert.equal(active.monotonic, false);
  assert.equal(active.points[0].value, 0, 'no invocation left running');
  assert.equal(count(named('adk.invocation.duration'), { 'adk.app.name': 'otlp_interop' }), 3);
}
console.log(`${spans.length} spans and ${metrics.length} metrics checked (${encoding})`);
