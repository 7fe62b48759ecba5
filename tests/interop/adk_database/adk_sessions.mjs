// @google/adk's own DatabaseSessionService on the database adk-cpp uses (run_adk_database.sh drives it).
//
//   node adk_sessions.mjs write-sample URL SESSION   writes a session through @google/adk, then prints it
//   node adk_sessions.mjs show URL SESSION           prints a session as @google/adk reads it
//   node adk_sessions.mjs compare A.json B.json      exits 1, saying where, when the two differ
//
// A session is printed as adk_session_worker prints it: state, lastUpdateTimeMs, and the events' ids,
// authors, invocation ids, content, custom metadata and state and artifact deltas. Event times are not
// compared (adk_session_worker prints them as timeMs): @google/adk keeps them in milliseconds where ADK Python
// and adk-cpp keep seconds; run_adk_database.sh checks those adk-cpp reads.
import { DatabaseSessionService, createEvent } from '@google/adk';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';

const [command, ...args] = process.argv.slice(2);

function comparable(event) {
  const out = {};
  for (const key of ['id', 'author', 'invocationId', 'content', 'customMetadata'])
    if (event[key] !== undefined) out[key] = event[key];
  out.actions = { stateDelta: event.actions?.stateDelta ?? {}, artifactDelta: event.actions?.artifactDelta ?? {} };
  return out;
}

async function show(service, sessionId) {
  const s = await service.getSession({ appName: 'app', userId: 'u', sessionId });
  if (!s) throw new Error(`no session ${sessionId}`);
  console.log(JSON.stringify({ state: s.state, lastUpdateTimeMs: s.lastUpdateTime, events: s.events.map(comparable) }));
}

async function writeSample(service, sessionId) {
  let session = await service.createSession({
    appName: 'app', userId: 'u', sessionId,
    state: { 'app:theme': 'light', 'user:lang': 'de', topic: 'trains' },
  });
  const append = async (fields) => {
    await service.appendEvent({ session, event: createEvent(fields) });
  };
  await append({
    id: 'e-1', author: 'user', invocationId: 'inv-9',
    content: { role: 'user', parts: [{ text: 'When is the next train to Lyon?' }] },
    actions: { stateDelta: { asked: 2, 'user:questions': 5 }, artifactDelta: {} },
  });
  await append({
    id: 'e-2', author: 'rail_agent', invocationId: 'inv-9',
    content: { role: 'model', parts: [{ functionCall: { id: 'call-7', name: 'next_train', args: { toCity: 'Lyon', max_results: 1 } } }] },
    actions: { stateDelta: {}, artifactDelta: {} },
  });
  await append({
    id: 'e-3', author: 'rail_agent', invocationId: 'inv-9',
    content: { role: 'user', parts: [{ functionResponse: { id: 'call-7', name: 'next_train', response: { departsAt: '10:42', platform_no: 3 } } }] },
    actions: { stateDelta: { 'app:calls': 4, last_city: 'Lyon' }, artifactDelta: {} },
  });
  await append({
    id: 'e-4', author: 'rail_agent', invocationId: 'inv-9',
    content: { role: 'model', parts: [{ text: 'The next train leaves at 10:42 from platform 3.' }] },
    actions: { stateDelta: {}, artifactDelta: { 'timetable.pdf': 2 } },
    customMetadata: { traceId: 't-9', nested_key: { innerKey: false } },
  });
  await show(service, sessionId);
}

function compare(a, b, path = '$') {
  if (path.endsWith('.timeMs')) return [];
  if (isDeepStrictEqual(a, b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => compare(a[k], b[k], `${path}.${k}`));
  }
  return [`${path}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`];
}

if (command === 'compare') {
  const [a, b] = args.map((f) => JSON.parse(readFileSync(f, 'utf8')));
  const differences = compare(a, b);
  for (const d of differences) console.log(d);
  process.exit(differences.length ? 1 : 0);
}
const service = new DatabaseSessionService(args[0]);
try {
  if (command === 'write-sample') await writeSample(service, args[1]);
  else if (command === 'show') await show(service, args[1]);
  else throw new Error(`unknown command ${command}`);
} finally {
  await service.orm?.close();
}
