// An agent served over A2A 0.3 by @google/adk 2.0.0's own server (toA2a: @a2a-js/sdk 0.3's server around its
// A2AAgentExecutor, on express), for adk-cpp's RemoteA2aAgent (a2a_remote_client): an LlmAgent whose model (a BaseLlm
// of this file, offline) streams "Echo: " and then the user's last words. Its card is at
// /echo/.well-known/agent-card.json.
//   node adk_server.mjs     prints "listening on http://127.0.0.1:PORT"
import express from 'express';
import { BaseLlm, LlmAgent, LogLevel, setLogLevel } from '@google/adk';
import { toA2a } from '@google/adk/a2a';

class EchoLlm extends BaseLlm {
  constructor() { super({ model: 'echo' }); }
  async *generateContentAsync(request) {
    const asked = (request.contents ?? []).filter((c) => c.role === 'user').at(-1);
    const words = (asked?.parts ?? []).map((p) => p.text ?? '').join('');
    yield { content: { role: 'model', parts: [{ text: 'Echo: ' }] }, partial: true };
    yield { content: { role: 'model', parts: [{ text: words }] }, partial: true };
    yield { content: { role: 'model', parts: [{ text: `Echo: ${words}` }] }, partial: false, turnComplete: true };
  }
  async connect() { throw new Error('no live connection'); }
}

// toA2a warns that this loopback test server takes no authentication; the first line printed must be the URL.
setLogLevel(LogLevel.ERROR);
const agent = new LlmAgent({ name: 'echo', description: 'Says back what it hears.', model: new EchoLlm() });
const app = express();
app.use(express.json());
const server = app.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  await toA2a(agent, { app, host: '127.0.0.1', port, basePath: '/echo', allowUnauthenticated: true });
  console.log(`listening on http://127.0.0.1:${port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
