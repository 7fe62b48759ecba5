// A2A 1.0 agents built with @a2a-js/sdk's server (DefaultRequestHandler on express), for adk-cpp's
// RemoteA2aAgent (a2a_remote_client): each serves its card at /{agent}/.well-known/agent-card.json, JSON-RPC at
// /{agent}/jsonrpc and HTTP+JSON at /{agent}/rest.
//   itinerary  streams an artifact in chunks (append, then lastChunk), then a second artifact whole, COMPLETED
//   booking    asks a question in text (INPUT_REQUIRED); the answer, sent with the task id, completes the task
//   sold_out   FAILED, with its reason in the status message
//   keyed_header, keyed_query   answer only requests with the API key "interop-key" (the card's apiKey scheme: the
//              X-API-Key header, the api_key query parameter); 401 otherwise
//   node sdk_server.mjs     prints "listening on http://127.0.0.1:PORT"
import express from 'express';
import { TaskState, Role } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const textPart = (text) => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' });
const textOf = (message) => message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const now = () => new Date();

function status(ctx, state, text) {
  const message = text === undefined ? undefined : {
    messageId: crypto.randomUUID(), role: Role.ROLE_AGENT, parts: [textPart(text)], contextId: ctx.contextId,
    taskId: ctx.taskId, extensions: [], referenceTaskIds: [], metadata: undefined };
  return { kind: 'statusUpdate', data: { taskId: ctx.taskId, contextId: ctx.contextId,
                                         status: { state, message, timestamp: now() }, metadata: undefined } };
}

function artifact(ctx, id, text, append, lastChunk) {
  return { kind: 'artifactUpdate', data: { taskId: ctx.taskId, contextId: ctx.contextId, append, lastChunk,
           artifact: { artifactId: id, name: id, description: '', parts: [textPart(text)], metadata: undefined,
                       extensions: [] }, metadata: undefined } };
}

function task(ctx) {
  return { kind: 'task', data: ctx.task ?? { id: ctx.taskId, contextId: ctx.contextId,
           status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
           artifacts: [], history: [ctx.userMessage], metadata: undefined } };
}

const executors = {
  itinerary: async (ctx, bus) => {
    bus.publish(task(ctx));
    bus.publish(status(ctx, TaskState.TASK_STATE_WORKING, 'Looking for flights.'));
    bus.publish(artifact(ctx, 'itinerary', 'Flight AF123 ', false, false));
    bus.publish(artifact(ctx, 'itinerary', 'leaves at 9:00 ', true, false));
    bus.publish(artifact(ctx, 'itinerary', `for: ${textOf(ctx.userMessage)}`, true, true));
    bus.publish(artifact(ctx, 'receipt', 'Receipt 42.', false, true));
    bus.publish(status(ctx, TaskState.TASK_STATE_COMPLETED));
  },
  booking: async (ctx, bus) => {
    bus.publish(task(ctx));
    if (!ctx.task) {
      bus.publish(status(ctx, TaskState.TASK_STATE_INPUT_REQUIRED, 'Which date?'));
    } else {
      bus.publish(artifact(ctx, 'booking', `Booked for ${textOf(ctx.userMessage)}.`, false, true));
      bus.publish(status(ctx, TaskState.TASK_STATE_COMPLETED));
    }
  },
  sold_out: async (ctx, bus) => {
    bus.publish(task(ctx));
    bus.publish(status(ctx, TaskState.TASK_STATE_FAILED, 'No seats left.'));
  },
};
const welcome = async (ctx, bus) => {
  bus.publish(task(ctx));
  bus.publish(artifact(ctx, 'welcome', `Welcome, key holder: ${textOf(ctx.userMessage)}`, false, true));
  bus.publish(status(ctx, TaskState.TASK_STATE_COMPLETED));
};
executors.keyed_header = welcome;
executors.keyed_query = welcome;
const keys = { keyed_header: { location: 'header', name: 'X-API-Key' },
               keyed_query: { location: 'query', name: 'api_key' } };

// The API key check in front of an agent's bindings (its card stays public).
function requireKey(where) {
  return (req, res, next) => {
    const given = where.location === 'header' ? req.get(where.name) : req.query[where.name];
    if (given === 'interop-key') return next();
    res.status(401).json({ error: { code: 401, message: 'a valid API key is required', status: 'UNAUTHENTICATED' } });
  };
}

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  for (const [name, run] of Object.entries(executors)) {
    const card = {
      name, description: `The ${name} agent (@a2a-js/sdk).`, version: '1.0.0',
      supportedInterfaces: [
        { url: `${base}/${name}/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
        { url: `${base}/${name}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' }],
      capabilities: { streaming: true, pushNotifications: false, extensions: [] },
      defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
      skills: [{ id: name, name, description: name, tags: [], examples: [], inputModes: [], outputModes: [],
                 securityRequirements: [] }],
      securitySchemes: keys[name] ? { key: { apiKeySecurityScheme: { description: '', ...keys[name] } } } : {},
      securityRequirements: keys[name] ? [{ schemes: { key: { list: [] } } }] : [], signatures: [],
    };
    const guard = keys[name] ? requireKey(keys[name]) : (req, res, next) => next();
    const executor = {
      execute: async (ctx, bus) => { await run(ctx, bus); bus.finished(); },
      cancelTask: async (taskId, bus) => { bus.finished(); },
    };
    const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
    app.use(`/${name}/.well-known/agent-card.json`, agentCardHandler({ agentCardProvider: handler }));
    app.use(`/${name}/jsonrpc`, guard, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
    app.use(`/${name}/rest`, guard, restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  }
  console.log(`listening on ${base}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
