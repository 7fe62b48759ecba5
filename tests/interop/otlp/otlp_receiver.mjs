// An OTLP/HTTP trace receiver: decodes each POST /v1/traces with the official OTLP definitions (the protobufjs code
// generated from opentelemetry-proto that @opentelemetry/otlp-transformer 0.215 ships) or, for application/json, as
// OTLP/JSON, and appends every span, normalized, as one JSON line to SPANS_FILE. Prints "listening on http://127.0.0.1:PORT".
//   node otlp_receiver.mjs SPANS_FILE
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const Response = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
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

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`unexpected ${req.method} ${req.url}`);
      const body = Buffer.concat(chunks);
      const type = req.headers['content-type'];
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
