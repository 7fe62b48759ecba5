// Prints the results of tools/bench/compare.sh as a Markdown table: both runtimes per workload and
// concurrency, and the ratios (adk-cpp over the TypeScript ADK, or the other way for costs).
//   node report.mjs results.jsonl machine.txt
import fs from 'node:fs';

const [resultsFile, machineFile] = process.argv.slice(2);
const rows = fs.readFileSync(resultsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const key = (r) => `${r.workload}/${r.concurrency}/${r.tag ?? ''}`;
const by = {};
for (const r of rows) (by[key(r)] ??= {})[r.runtime] = r;
const f = (v, digits = 0) => (v === undefined ? '-' : Number(v).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const ratio = (a, b) => (a && b ? `${(a / b).toFixed(1)}x` : '-');
// mock-llm's CPU during a runtime's run, per invocation: what the runtime left of the machine's cores.
const mockPerInvocation = (r) => (r.mock_cpu_us === undefined || !r.invocations ? undefined : r.mock_cpu_us / 1000 / r.invocations);
const names = { a: '(a) 1 agent, tool + 20 chunks', b: '(b) 1 agent, tool + 100 chunks', c: '(c) parallel of 4', d: '(d) sequence of 5' };

console.log(fs.readFileSync(machineFile, 'utf8').trim().split('\n').map((l) => `${l}  `).join('\n'));
console.log('');
console.log('| workload | conc. | inv/s cpp / ts (ratio) | events/s cpp / ts | CPU ms/inv cpp / ts (ratio) | p50 / p99 ms cpp | p50 / p99 ms ts | chunk-to-event p50 / p99 us cpp | same, ts | peak RSS MB cpp / ts | RSS KB per conc. inv cpp / ts | mock-llm CPU ms/inv during cpp / ts | verified cpp / ts |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const k of Object.keys(by)) {
  const { 'adk-cpp': c = {}, 'adk-ts': t = {} } = by[k];
  const [w, n, tag] = k.split('/');
  console.log(`| ${names[w]}${tag === 'paced' ? ', chunks 1 ms apart' : ''} | ${n} | ${f(c.invocations_per_s)} / ${f(t.invocations_per_s)} (${ratio(c.invocations_per_s, t.invocations_per_s)}) ` +
    `| ${f(c.events_per_s)} / ${f(t.events_per_s)} | ${f(c.cpu_ms_per_invocation, 2)} / ${f(t.cpu_ms_per_invocation, 2)} (${ratio(t.cpu_ms_per_invocation, c.cpu_ms_per_invocation)}) ` +
    `| ${f(c.latency_ms_p50, 1)} / ${f(c.latency_ms_p99, 1)} | ${f(t.latency_ms_p50, 1)} / ${f(t.latency_ms_p99, 1)} ` +
    `| ${f(c.chunk_to_event_us_p50)} / ${f(c.chunk_to_event_us_p99)} | ${f(t.chunk_to_event_us_p50)} / ${f(t.chunk_to_event_us_p99)} ` +
    `| ${f(c.peak_rss_kib / 1024)} / ${f(t.peak_rss_kib / 1024)} | ${f(c.rss_kib_per_concurrent)} / ${f(t.rss_kib_per_concurrent)} ` +
    `| ${f(mockPerInvocation(c), 2)} / ${f(mockPerInvocation(t), 2)} ` +
    `| ${c.verified ?? 0}/${(c.verified ?? 0) + (c.failed ?? 0)} / ${t.verified ?? 0}/${(t.verified ?? 0) + (t.failed ?? 0)} |`);
}

// A run with failed invocations does not count: say which, and the first error each one saw.
const failures = rows.filter((r) => r.failed > 0);
if (failures.length > 0) {
  console.log('');
  for (const r of failures)
    console.log(`- ${names[r.workload]}${r.tag === 'paced' ? ', paced' : ''}, concurrency ${r.concurrency}, ${r.runtime}: ` +
      `${r.failed} of ${r.invocations} invocations failed; first error: ${r.first_error ?? 'none reported (unexpected events)'}`);
}
