// Checks one trace end to end: the JS client's span (otel_client.mjs) is the parent of the server's invocation
// span, every span the server exported is in the client's trace, and each request mock-llm received carried the
// traceparent of a generate_content span of that trace (tracestate passed on too); the server's metrics arrived.
//   node otel_js_check.mjs SPANS_FILE TRACE_LOG CLIENT_JSON
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';

const [spansFile, traceLog, clientFile] = process.argv.slice(2);
const client = JSON.parse(readFileSync(clientFile, 'utf8'));
const lines = readFileSync(spansFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
for (const l of lines) assert.equal(l.error, undefined, 'the receiver failed to decode a request: ' + l.error);
const spans = lines.filter((l) => !l.metric);
const metrics = lines.filter((l) => l.metric);

assert.ok(spans.length >= 6, `the server's spans arrived (${spans.length})`);
for (const s of spans) assert.equal(s.traceId, client.traceId, `${s.name} is in the client's trace`);
const invocation = spans.find((s) => s.name === 'invocation');
assert.ok(invocation, 'the invocation span arrived');
assert.equal(invocation.parentSpanId, client.spanId, "the invocation's parent is the client's span");
assert.equal((invocation.flags & 0x300), 0x300, 'its parent is marked remote');

const sent = readFileSync(traceLog, 'utf8').trim().split('\n');
assert.equal(sent.length, 2, 'two model requests: the tool call and the answer');
const inference = new Set(spans.filter((s) => s.name.startsWith('generate_content ')).map((s) => s.spanId));
for (const traceparent of sent) {
  const [version, traceId, spanId, flags] = traceparent.split('-');
  assert.equal(version, '00');
  assert.equal(traceId, client.traceId, 'the model request is in the client trace');
  assert.ok(inference.has(spanId), `the model request's parent ${spanId} is a generate_content span`);
  assert.equal(flags, '01');
}
assert.ok(metrics.some((m) => m.name === 'gen_ai.client.operation.duration'), "the server's metrics arrived");
console.log(`one trace ${client.traceId}: ${spans.length} spans, ${sent.length} model requests`);
