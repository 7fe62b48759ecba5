// The graph of workflow_parity.cpp, run by @google/adk's Workflow, and the comparison of what each wrote.
//   node workflow_parity.mjs run MESSAGE OUT.json   writes @google/adk's events as JSON (its logger prints on stdout)
//   node workflow_parity.mjs compare ADK.json CPP.json
// Both graphs: START -> prepare -> classify -(bug)-> fix -> [left, right] -> joined -> report
//                                          -(__DEFAULT__)-> other -> report
//              report -(again)-> report ... -(done)-> done   (report runs until it ran three times)
import fs from 'node:fs';
import {
  Workflow, FunctionNode, JoinNode, START, DEFAULT_ROUTE, InMemoryRunner, createEvent,
} from '@google/adk';

function graph() {
  const prepare = new FunctionNode('prepare', (ctx, input) => `${input} (prepared)`);
  const classify = new FunctionNode('classify', (ctx, input) =>
    createEvent({ output: { text: input }, route: input.includes('bug') ? 'bug' : 'question' }));
  const fix = new FunctionNode('fix', (ctx, input) => `fix for ${input.text}`);
  const other = new FunctionNode('other', (ctx, input) => `answer to ${input.text}`);
  const left = new FunctionNode('left', (ctx, input) => ({ side: 'left', got: input }));
  const right = new FunctionNode('right', (ctx, input) => ({ side: 'right', got: input }));
  const joined = new JoinNode({ name: 'joined' });
  let runs = 0;
  const report = new FunctionNode('report', (ctx, input) => {
    runs += 1;
    return createEvent({ output: { run: runs }, route: runs < 3 ? 'again' : 'done' });
  });
  const done = new FunctionNode('done', (ctx, input) => `done after ${input.run}`);
  return new Workflow({
    name: 'parity',
    edges: [
      [START, prepare, classify],
      [classify, { bug: fix, [DEFAULT_ROUTE]: other }],
      [fix, [left, right]],
      [left, joined],
      [right, joined],
      [joined, report],
      [other, report],
      [report, { again: report, done }],
    ],
  });
}

async function run(message, file) {
  const runner = new InMemoryRunner({ agent: graph(), appName: 'parity' });
  const session = await runner.sessionService.createSession({ appName: 'parity', userId: 'u' });
  const events = [];
  for await (const event of runner.runAsync({
    userId: 'u', sessionId: session.id, newMessage: { role: 'user', parts: [{ text: message }] },
  })) {
    events.push(event);
  }
  fs.writeFileSync(file, JSON.stringify(events));
}

// What both must agree on, per node output: the node (its path without runs, in either separator), the author, the
// output, the nodes it is the output of (outputFor, as node names below the workflow: ADK Python and adk-cpp also
// list the workflow itself for its last node, ADK TypeScript does not), the route (ADK TypeScript writes it at the
// top of the event, ADK Python and adk-cpp in its actions), the branch (a fan-out's targets get "name@1"), and
// the text. ADK TypeScript gives no text to an output a node returned inside an event (a routing node's, a
// join's); adk-cpp always writes the output as text: the output itself, or its JSON.
function normalize(events) {
  const names = (path) => path.split(/[/.]/).map((s) => s.replace(/@\d+$/, ''));
  const out = [];
  for (const e of events) {
    const path = e.nodeInfo?.path ?? e.node_info?.path;
    if (!path || e.output === undefined) continue;
    const route = e.actions?.route ?? e.route;
    const text = (e.content?.parts ?? []).map((p) => p.text ?? '').join('');
    out.push({
      node: names(path).slice(1).join('/'),
      author: e.author,
      output: e.output,
      outputFor: (e.nodeInfo?.outputFor ?? []).map((p) => names(p).slice(1).join('/')).filter((p) => p !== ''),
      route: route === undefined ? null : route,
      branch: e.branch ?? '',
      text: text === '' ? (typeof e.output === 'string' ? e.output : JSON.stringify(e.output)) : text,
    });
  }
  const key = (o) => JSON.stringify([o.node, o.output]);
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function compare(a, b) {
  const left = normalize(JSON.parse(fs.readFileSync(a, 'utf8')));
  const right = normalize(JSON.parse(fs.readFileSync(b, 'utf8')));
  const l = JSON.stringify(left, null, 1);
  const r = JSON.stringify(right, null, 1);
  if (l !== r) {
    console.log(`DIFFERENT:\n@google/adk: ${l}\nadk-cpp: ${r}`);
    process.exit(1);
  }
  if (left.length < 5) {
    console.log(`too few node outputs to compare: ${l}`);
    process.exit(1);
  }
  console.log(`same ${left.length} node outputs`);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'run') await run(args[0], args[1]);
else if (cmd === 'compare') compare(args[0], args[1]);
else { console.error('usage: workflow_parity.mjs run MESSAGE OUT.json | compare ADK.json CPP.json'); process.exit(2); }
