// A client traced by OpenTelemetry's JS SDK (@opentelemetry/sdk-trace-base, W3C trace context from
// @opentelemetry/core) that asks adk-cpp's API server one question: its span's context goes out as `traceparent`
// and `tracestate`, as any instrumented client sends it. Prints {"traceId", "spanId"} of its span.
//   node otel_client.mjs BASE_URL TOKEN
import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

const [base, token] = process.argv.slice(2);
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
const tracer = provider.getTracer('adk-cpp-interop-client');

const span = tracer.startSpan('ask weather_agent');
const ctx = trace.setSpan(context.active(), span);
const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
propagation.inject(ctx, headers);
const tracestate = 'client=js';
headers.tracestate = headers.tracestate ? `${tracestate},${headers.tracestate}` : tracestate;
if (!headers.traceparent) throw new Error('the SDK injected no traceparent');

let r = await fetch(`${base}/apps/weather_agent/users/u/sessions/traced`, { method: 'POST', headers });
if (!r.ok) throw new Error(`creating the session answered ${r.status}: ${await r.text()}`);
r = await fetch(`${base}/run`, {
  method: 'POST', headers,
  body: JSON.stringify({ appName: 'weather_agent', userId: 'u', sessionId: 'traced',
    newMessage: { role: 'user', parts: [{ text: 'Weather in Paris?' }] } }),
});
const events = await r.json();
if (!r.ok || !JSON.stringify(events).includes('sunny')) throw new Error(`the run answered ${r.status}: ${JSON.stringify(events)}`);
span.end();
await provider.forceFlush();
const [finished] = exporter.getFinishedSpans();
const { traceId, spanId } = finished.spanContext();
console.log(JSON.stringify({ traceId, spanId }));
