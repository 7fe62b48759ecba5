// @google/adk's DatabaseSessionService (npm; MikroORM with its PostgreSQL driver, its default pool) on the
// workloads of tools/bench/session_bench.cpp: one session with appends one after another, and 100 sessions
// with one writer each, all at once. Each event is a model text of 200 bytes with a one-key state delta.
// Each workload first runs a tenth of its appends, unmeasured, on sessions of their own (V8 compiles what
// it runs often: it is measured warm). Prints the rows of session_bench.cpp's table; "process CPU" is
// everything Node did (one thread runs the JavaScript), the database server's CPU is not counted.
//
//   node session_bench.mjs URL [APPENDS]       (tools/bench/sessions.sh runs it)
import { DatabaseSessionService, createEvent } from '@google/adk';

const [url, appendsArg] = process.argv.slice(2);
const appends = Number(appendsArg ?? 2000);
const service = new DatabaseSessionService(url);

async function writer(sessionId, count, latencies) {
  const session = await service.createSession({ appName: 'bench', userId: 'u', sessionId });
  for (let i = 0; i < count; i++) {
    const event = createEvent({
      author: 'bench_agent', invocationId: 'inv',
      content: { role: 'model', parts: [{ text: 'x'.repeat(200) }] },
      actions: { stateDelta: { turn: i }, artifactDelta: {} },
    });
    const t0 = performance.now();
    await service.appendEvent({ session, event });
    latencies.push(performance.now() - t0);
  }
}

async function measure(sessions, each, tag) {
  const latencies = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: sessions }, (_, n) => writer(`${tag}-${n}`, each, latencies)));
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  return { latencies, wallS, cpuUs: cpu.user + cpu.system };
}

const percentile = (sorted, p) => sorted[Math.floor(p * (sorted.length - 1))] ?? 0;
const pad = (s, n) => String(s).padEnd(n);
const num = (x, n, digits) => x.toFixed(digits).padStart(n);
try {
  const workloads = [['1 session, one by one', 1, appends], ['100 sessions at once', 100, Math.floor(appends / 100)]];
  let round = 0;
  for (const [name, sessions, each] of workloads) {
    await measure(sessions, Math.max(1, Math.floor(each / 10)), `warm${round}`);
    const f = await measure(sessions, each, `run${round++}`);
    const count = f.latencies.length;
    console.log(`${pad('@google/adk DatabaseSessionService', 44)} ${pad(name, 26)} ${num(count / f.wallS, 9, 0)} ` +
                `${num(percentile(f.latencies, 0.5), 9, 3)} ${num(percentile(f.latencies, 0.99), 9, 3)} ` +
                `${num(f.cpuUs / count, 14, 1)} ${num(f.cpuUs / count, 15, 1)}`);
  }
} finally {
  await service.orm?.close();
}
