// The agent workloads of tools/bench on Google's TypeScript ADK (@google/adk), as agent_bench.cpp runs them
// on adk-cpp: same mock-llm, same script, same measurements, one JSON object printed.
//   GOOGLE_GEMINI_BASE_URL=URL GEMINI_API_KEY=bench node agent_bench.mjs --workload a --concurrency N \
//       --invocations N --chunks K [--warmup N]
//
// Before the measured invocations, --warmup N (300 by default) run unmeasured, at the same concurrency up to
// 50: V8 compiles the hot code only after it has run for a while, and a runtime measured cold is measured
// compiling itself. agent_bench.cpp warms adk-cpp up the same way. The peak RSS mark is then reset, so
// memory per invocation is the measured run's.
import {
  FunctionTool, InMemoryRunner, LlmAgent, LogLevel, ParallelAgent, SequentialAgent, StreamingMode, setLogLevel,
} from '@google/adk';
import fs from 'node:fs';

setLogLevel(LogLevel.ERROR);
const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, v, i, all) => (i % 2 ? pairs : [...pairs, [v.slice(2), all[i + 1]]]), []));
const workload = args.workload ?? 'a';
const concurrency = Number(args.concurrency ?? 1);
const invocations = Number(args.invocations ?? 100);
const chunks = Number(args.chunks ?? 20);
const warmup = Number(args.warmup ?? 300);

const tool = new FunctionTool({
  name: 'get_weather',
  description: 'Returns the weather for a city.',
  parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
  execute: async ({ city }) => ({ city, sky: 'sunny' }),
});
const llmAgent = (name) => new LlmAgent({
  name, model: 'gemini-2.5-flash', instruction: 'You answer questions about the weather. Use the get_weather tool.', tools: [tool],
});
let agent;
let agents = 1;
if (workload === 'c') {
  agents = 4;
  agent = new ParallelAgent({ name: 'parallel', description: 'Four at once.', subAgents: [0, 1, 2, 3].map((i) => llmAgent(`weather_${i}`)) });
} else if (workload === 'd') {
  agents = 5;
  agent = new SequentialAgent({ name: 'sequence', description: 'Five in a row.', subAgents: [0, 1, 2, 3, 4].map((i) => llmAgent(`step_${i}`)) });
} else {
  agent = llmAgent('weather');
}
const runner = new InMemoryRunner({ agent, appName: 'bench' });

// Opened once: at concurrency 10,000 the process holds so many sockets that a later open() can fail.
const statusFd = fs.openSync('/proc/self/status', 'r');
const rssKib = (field) => {
  const buffer = Buffer.alloc(8192);
  const text = buffer.toString('utf8', 0, fs.readSync(statusFd, buffer, 0, buffer.length, 0));
  return Number(text.match(new RegExp(`${field}\\s+(\\d+)`))[1]);
};
const percentile = (values, p) => {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.floor(p * (sorted.length - 1))];
};

const latenciesMs = [];
const chunkUs = [];
let events = 0;
let verified = 0;
let failed = 0;
let next = 0;
let target = 0;  // invocations to start in this phase
let firstError;

async function worker() {
  while (next < target) {
    next++;
    const t0 = process.hrtime.bigint();
    let partialChunks = 0;
    let finals = 0;
    let seen = 0;
    try {
      const session = await runner.sessionService.createSession({ appName: 'bench', userId: 'u' });
      const newMessage = { role: 'user', parts: [{ text: 'Weather in Paris?' }] };
      for await (const ev of runner.runAsync({ userId: 'u', sessionId: session.id, newMessage, runConfig: { streamingMode: StreamingMode.SSE } })) {
        seen++;
        if (ev.errorCode || ev.errorMessage) firstError ??= `an error event: ${ev.errorCode} ${ev.errorMessage}`;
        const text = ev.content?.parts?.map((p) => p.text ?? '').join('') ?? '';
        if (ev.partial) {
          const now = process.hrtime.bigint();
          for (const m of text.matchAll(/w(\d+)/g)) {
            chunkUs.push(Number(now - BigInt(m[1])) / 1000);
            partialChunks++;
          }
        } else if (text.length > 0 && !ev.errorCode && !ev.content?.parts?.some((p) => p.functionCall || p.functionResponse)) {
          finals++;
        }
      }
      // Finished conversations are not what "RSS per concurrent invocation" measures.
      await runner.sessionService.deleteSession({ appName: 'bench', userId: 'u', sessionId: session.id });
    } catch (e) {
      firstError ??= String(e?.stack ?? e);
    }
    events += seen;
    latenciesMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (partialChunks === agents * chunks && finals === agents) verified++;
    else failed++;
  }
}

// The warm-up, then everything it counted forgotten and the peak RSS mark reset (Linux: clear_refs 5).
target = warmup;
await Promise.all(Array.from({ length: Math.min(concurrency, 50) }, worker));
const warmupFailed = failed;
latenciesMs.length = 0;
chunkUs.length = 0;
events = verified = failed = next = 0;
fs.writeFileSync('/proc/self/clear_refs', '5');

target = invocations;
const rssBefore = rssKib('VmRSS:');
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
await Promise.all(Array.from({ length: concurrency }, worker));
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const cpu = process.cpuUsage(cpu0);
const peak = rssKib('VmHWM:');
const result = {
  runtime: 'adk-ts',
  workload, concurrency, invocations, chunks, warmup, warmup_failed: warmupFailed, verified, failed,
  invocations_per_s: invocations / seconds,
  events_per_s: events / seconds,
  cpu_ms_per_invocation: (cpu.user + cpu.system) / 1000 / invocations,
  latency_ms_p50: percentile(latenciesMs, 0.5),
  latency_ms_p99: percentile(latenciesMs, 0.99),
  chunk_to_event_us_p50: percentile(chunkUs, 0.5),
  chunk_to_event_us_p99: percentile(chunkUs, 0.99),
  peak_rss_kib: peak,
  rss_kib_per_concurrent: (peak - rssBefore) / concurrency,
};
if (firstError) result.first_error = firstError;
console.log(JSON.stringify(result));
process.exit(failed === 0 && warmupFailed === 0 ? 0 : 1);
