// Tool calls to an MCP server's `echo` through @google/adk's MCPToolset (tools/bench/mcp.sh runs it beside
// tools/bench/mcp_bench.cpp): the toolset's tools listed once, then MCPTool.runAsync as an agent's call runs it.
//
//   node mcp_bench.mjs --calls N --concurrency C [--warmup W] (--stdio COMMAND ARG... | --http URL [--server-pid PID])
//
// Prints one JSON line like mcp_bench's. The server's CPU per call is its process's (--server-pid) or, over stdio,
// that of this process's children once they have exited (MCPTool starts the server anew for each call).
import { MCPToolset, setLogLevel, LogLevel } from '@google/adk';
import { readFileSync } from 'node:fs';

setLogLevel(LogLevel.ERROR);
const argv = process.argv.slice(2);
let calls = 200, concurrency = 1, warmup = 20, serverPid = 0, url = null, stdio = null;
for (let i = 0; i < argv.length; ++i) {
  const a = argv[i];
  if (a === '--calls') calls = Number(argv[++i]);
  else if (a === '--concurrency') concurrency = Number(argv[++i]);
  else if (a === '--warmup') warmup = Number(argv[++i]);
  else if (a === '--server-pid') serverPid = Number(argv[++i]);
  else if (a === '--http') url = argv[++i];
  else if (a === '--stdio') { stdio = argv.slice(i + 1); break; }
  else { console.error(`mcp_bench.mjs: unknown argument ${a}`); process.exit(2); }
}

// Microseconds on a CPU: of a process by its schedstat, or of this process's exited children (clock ticks).
const cpuOf = (pid) => pid > 0 ? Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000 : 0;
const childrenCpu = () => {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 1e6 / 100;  // cutime + cstime, in ticks of 10 ms
};
const selfCpu = () => { const u = process.cpuUsage(); return u.user + u.system; };

const params = stdio
  ? { type: 'StdioConnectionParams', serverParams: { command: stdio[0], args: stdio.slice(1) } }
  : { type: 'StreamableHTTPConnectionParams', url };
const toolset = new MCPToolset(params, ['echo']);
const [echo] = await toolset.getTools();
const toolContext = { abortSignal: new AbortController().signal };

async function run(n) {
  const latencies = [];
  let next = 0, failures = 0;
  async function caller() {
    while (next < n) {
      ++next;
      const start = process.hrtime.bigint();
      try {
        const result = await echo.runAsync({ args: { message: 'hello' }, toolContext });
        if (result.isError) ++failures;
      } catch (e) {
        if (++failures === 1) console.error(`mcp_bench.mjs: a call failed: ${e.message}`);
      }
      latencies.push(Number(process.hrtime.bigint() - start) / 1000);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, caller));
  return { latencies, failures };
}

await run(warmup);
const cpu0 = selfCpu(), server0 = stdio ? childrenCpu() : cpuOf(serverPid), t0 = process.hrtime.bigint();
const { latencies, failures } = await run(calls);
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const cpu = selfCpu() - cpu0, server = (stdio ? childrenCpu() : cpuOf(serverPid)) - server0;
latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.floor(p * (latencies.length - 1))];
console.log(JSON.stringify({
  runtime: '@google/adk', transport: stdio ? 'stdio' : 'http', calls, concurrency, failures,
  calls_per_s: calls / seconds, client_cpu_us_per_call: cpu / calls, p50_us: pct(0.5), p99_us: pct(0.99),
  server_cpu_us_per_call: server / calls,
}));
await toolset.close();
process.exit(0);
