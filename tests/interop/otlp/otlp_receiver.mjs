// An OTLP/HTTP receiver of traces and metrics: decodes each POST /v1/traces and /v1/metrics with the official OTLP
// definitions (the protobufjs code generated from opentelemetry-proto that @opentelemetry/otlp-transformer 0.215
// ships) or, for application/json, as OTLP/JSON, and appends every span and every metric, normalized, as one JSON
// line to SPANS_FILE (metrics with "metric": true). Prints "listening on http://127.0.0.1:PORT".
//   node otlp_receiver.mjs SPANS_FILE
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const Response = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
const MetricsRequest = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
const MetricsResponse = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
const out = process.argv[2];

const hex = (b) => Buffer.from(b ?? []).toString('hex');
function value(v) {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(value);
  throw new Error('an AnyValue of no known kind: ' + JSON.stringify(v));
}
const attributes = (list) => Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));

function record(request, encoding) {
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const span = {
          encoding, resource, scope: ss.scope?.name,
          name: s.name, kind: s.kind, flags: s.flags,
          start: String(s.startTimeUnixNano), end: String(s.endTimeUnixNano),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
          attributes: attributes(s.attributes), droppedAttributes: s.droppedAttributesCount ?? 0,
        };
        if (encoding === 'protobuf') {
          Object.assign(span, { traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId) });
        } else {
          Object.assign(span, { traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '' });
        }
        appendFileSync(out, JSON.stringify(span) + '\n');
      }
    }
  }
}

// A metric: its kind (sum, gauge, histogram), and each data point with its attributes and values as numbers.
function recordMetrics(request, encoding) {
  for (const rm of request.resourceMetrics ?? []) {
    const resource = attributes(rm.resource?.attributes);
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        const kind = ['sum', 'gauge', 'histogram'].find((k) => m[k] !== undefined);
        if (!kind) throw new Error('a metric of no known kind: ' + JSON.stringify(m));
        const data = m[kind];
        const points = (data.dataPoints ?? []).map((p) => ({
          attributes: attributes(p.attributes),
          start: String(p.startTimeUnixNano ?? '0'), time: String(p.timeUnixNano),
          value: p.asDouble ?? (p.asInt !== undefined ? Number(p.asInt) : undefined),
          count: p.count !== undefined ? Number(p.count) : undefined, sum: p.sum,
          bucketCounts: (p.bucketCounts ?? []).map(Number), explicitBounds: p.explicitBounds ?? [],
          min: p.min, max: p.max,
        }));
        appendFileSync(out, JSON.stringify({
          metric: true, encoding, resource, scope: sm.scope?.name, name: m.name, unit: m.unit,
          description: m.description, kind, temporality: data.aggregationTemporality,
          monotonic: data.isMonotonic ?? false, points,
        }) + '\n');
      }
    }
  }
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      const body = Buffer.concat(chunks);
      const type = req.headers['content-type'];
      if (req.method === 'POST' && req.url === '/v1/metrics') {
        if (type === 'application/x-protobuf') {
          recordMetrics(MetricsRequest.toObject(MetricsRequest.decode(body), { longs: String, enums: Number }), 'protobuf');
          res.writeHead(200, { 'content-type': 'application/x-protobuf' });
          res.end(Buffer.from(MetricsResponse.encode(MetricsResponse.create({})).finish()));
        } else if (type === 'application/json') {
          recordMetrics(JSON.parse(body.toString('utf8')), 'json');
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
        } else {
          throw new Error('unexpected content-type ' + type);
        }
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`unexpected ${req.method} ${req.url}`);
      if (type === 'application/x-protobuf') {
        const decoded = Request.toObject(Request.decode(body), { longs: String, enums: Number, bytes: Array });
        record(decoded, 'protobuf');
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        res.end(Buffer.from(Response.encode(Response.create({})).finish()));
      } else if (type === 'application/json') {
        record(JSON.parse(body.toString('utf8')), 'json');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      } else {
        throw new Error('unexpected content-type ' + type);
      }
    } catch (e) {
      appendFileSync(out, JSON.stringify({ error: String(e.stack ?? e) }) + '\n');
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(e) }));
    }
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
