// The graphs of workflow_bench.cpp on @google/adk 2.0.0's Workflow: same nodes, same measurements, one JSON
// object printed per scenario (tools/bench/workflow.sh runs both).
//   node workflow_bench.mjs [nodes] [rounds] [warmup]
// Warm-up rounds run first, unmeasured: V8 compiles the hot code only after it has run for a while.
import {
  FunctionNode, InMemoryRunner, JoinNode, LogLevel, ParallelWorker, RequestInput, START, Workflow, setLogLevel,
} from '@google/adk';

setLogLevel(LogLevel.ERROR);
const [nodes = 100, rounds = 21, warmup = 5] = process.argv.slice(2).map(Number);

const pass = (name) => new FunctionNode(name, (ctx, input) => input);

function chain(n, ask) {
  const list = Array.from({ length: n }, (_, i) => pass(`n${i}`));
  if (ask) list.push(new FunctionNode('ask', () => new RequestInput({ message: 'Go on?', interruptId: 'q' })));
  return new Workflow({ name: 'chain', edges: [[START, ...list]] });
}

function fanout(n) {
  const first = pass('first');
  const join = new JoinNode({ name: 'all' });
  const edges = [[START, first]];
  for (let i = 0; i < n; i += 1) {
    const node = pass(`n${i}`);
    edges.push([first, node], [node, join]);
  }
  return new Workflow({ name: 'fanout', edges });
}

function dynamic(n) {
  const step = pass('step');
  return new Workflow({
    name: 'dynamic',
    dynamicEntry: async (ctx, input) => {
      let value = input;
      for (let i = 0; i < n; i += 1) value = (await ctx.runNode(step, value)).output;
      return value;
    },
  });
}

function workers(n) {
  const items = new FunctionNode('items', () => Array.from({ length: n }, (_, i) => i));
  const each = new ParallelWorker(pass('each'), { maxParallelWorkers: 8 });
  return new Workflow({ name: 'workers', edges: [[START, items, each]] });
}

async function drain(iterator) {
  let events = 0;
  for await (const _ of iterator) events += 1;
  return events;
}

async function one(agent, resume) {
  const runner = new InMemoryRunner({ agent, appName: 'bench' });
  const session = await runner.sessionService.createSession({ appName: 'bench', userId: 'u' });
  let message = { role: 'user', parts: [{ text: 'go' }] };
  if (resume) {
    await drain(runner.runAsync({ userId: 'u', sessionId: session.id, newMessage: message }));
    message = { role: 'user', parts: [{ functionResponse: { id: 'q', name: 'adk_request_input', response: { result: true } } }] };
  }
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const events = await drain(runner.runAsync({ userId: 'u', sessionId: session.id, newMessage: message }));
  const cpu = process.cpuUsage(c0);
  return { wall_ms: Number(process.hrtime.bigint() - t0) / 1e6, cpu_ms: (cpu.user + cpu.system) / 1e3, events };
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

async function scenario(name, n, agent, resume) {
  for (let i = 0; i < warmup; i += 1) await one(agent, resume);
  const wall = [];
  const cpu = [];
  let events = 0;
  for (let i = 0; i < rounds; i += 1) {
    const s = await one(agent, resume);
    wall.push(s.wall_ms);
    cpu.push(s.cpu_ms);
    events = s.events;
  }
  console.log(JSON.stringify({ runtime: '@google/adk', scenario: name, nodes: n, events, wall_ms: median(wall), cpu_ms: median(cpu) }));
}

await scenario('chain', nodes, chain(nodes, false), false);
await scenario('fanout', nodes, fanout(nodes), false);
await scenario('resume', nodes * 10, chain(nodes * 10, true), true);
await scenario('dynamic', nodes, dynamic(nodes), false);
await scenario('workers', nodes, workers(nodes), false);
