// @a2a-js/sdk's clients (A2A 1.0) against adk-cpp's A2A server (a2a_interop_server), on each binding: the card,
// a task sent and one streamed, GetTask, ListTasks, CancelTask, a stream dropped and subscribed again, a task that
// waits for its client answered, a failed task, push notifications to a webhook here, and the errors the SDK knows
// by their reasons; then its A2A 0.3 JSON-RPC transport (compat/v0_3), as an agent still on 0.3 talks.
//   node a2a_sdk_client.mjs BASE_URL GATE_FILE WEBHOOK_PORT
// Prints "PASS binding: check" or "FAIL binding: check: why" per check, then "a2a sdk interop: PASS" when all pass.
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { Role, TaskState } from '@a2a-js/sdk';
import { writeFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';

const [base, gate, hookPort] = process.argv.slice(2);

// The webhook: what the server posts, with its headers.
const posts = [];
const hook = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => { body += chunk; });
  req.on('end', () => {
    posts.push({ path: req.url, token: req.headers['x-a2a-notification-token'], body: JSON.parse(body) });
    res.writeHead(200).end();
  });
});
await new Promise((resolve) => hook.listen(Number(hookPort), '127.0.0.1', resolve));
let failures = 0;

function check(binding, name, ok, why = '') {
  if (ok) console.log(`PASS ${binding}: ${name}`);
  else { failures++; console.log(`FAIL ${binding}: ${name}: ${why}`); }
}

function textPart(text) {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' };
}

function message(text, extra = {}) {
  return { messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts: [textPart(text)], contextId: '', taskId: '',
           extensions: [], referenceTaskIds: [], metadata: undefined, ...extra };
}

const textOf = (parts) => parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

async function client(binding, app) {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] });
  return new ClientFactory(options).createFromUrl(`${base}/a2a/${app}/`);
}

async function collect(stream, stopAfter = Infinity) {
  const events = [];
  for await (const e of stream) {
    events.push(e.payload);
    if (events.length >= stopAfter) break;
  }
  return events;
}

async function expectError(promise, reason) {
  try {
    await promise;
    return `no error (wanted ${reason})`;
  } catch (e) {
    return e.reason === reason ? '' : `${e.reason ?? e.name}: ${e.message}`;
  }
}

for (const binding of ['JSONRPC', 'HTTP+JSON']) {
  const weather = await client(binding, 'weather');
  const card = await weather.getAgentCard();
  check(binding, 'the card', card.name === 'weather_agent' && card.capabilities?.streaming === true &&
        card.skills.some((s) => s.name === 'get_weather'), JSON.stringify(card).slice(0, 300));

  // A task sent, followed to its end.
  const sent = await weather.sendMessage({ message: message('Weather in Paris?') });
  check(binding, 'SendMessage: a completed task with its answer',
        sent.status?.state === TaskState.TASK_STATE_COMPLETED && sent.artifacts.length === 1 &&
        textOf(sent.artifacts[0].parts) === 'It is sunny in Paris.', JSON.stringify(sent).slice(0, 400));

  // A task streamed: the task, WORKING with the call and its result, the answer chunk by chunk, COMPLETED.
  const events = await collect(weather.sendMessageStream({ message: message('Weather in Paris?') }));
  const first = events[0];
  const chunks = events.filter((e) => e.$case === 'artifactUpdate' && !e.value.lastChunk);
  const whole = events.find((e) => e.$case === 'artifactUpdate' && e.value.lastChunk);
  const last = events[events.length - 1];
  check(binding, 'SendStreamingMessage: the task, its work, its answer in chunks, its end',
        first?.$case === 'task' && first.value.status.state === TaskState.TASK_STATE_SUBMITTED &&
        events.some((e) => e.$case === 'statusUpdate' && e.value.status.state === TaskState.TASK_STATE_WORKING) &&
        chunks.map((c) => textOf(c.value.artifact.parts)).join('') === 'It is sunny in Paris.' &&
        chunks.slice(1).every((c) => c.value.append) && whole && textOf(whole.value.artifact.parts) === 'It is sunny in Paris.' &&
        last?.$case === 'statusUpdate' && last.value.status.state === TaskState.TASK_STATE_COMPLETED,
        JSON.stringify(events.map((e) => e.$case)));
  const streamedId = first?.value?.id;

  const got = await weather.getTask({ id: streamedId, historyLength: 1 });
  check(binding, 'GetTask with historyLength', got.id === streamedId && got.history.length === 1 &&
        got.status.state === TaskState.TASK_STATE_COMPLETED, JSON.stringify(got).slice(0, 300));

  const listed = await weather.listTasks({ contextId: first?.value?.contextId, pageSize: 10, includeArtifacts: true });
  check(binding, 'ListTasks by context', listed.tasks.length === 1 && listed.tasks[0].id === streamedId &&
        listed.tasks[0].artifacts.length === 1 && listed.totalSize === 1 && listed.nextPageToken === '',
        JSON.stringify(listed).slice(0, 300));

  check(binding, 'CancelTask of an ended task: TaskNotCancelableError',
        !(await expectError(weather.cancelTask({ id: streamedId }), 'TASK_NOT_CANCELABLE')));
  const unknown = await expectError(weather.getTask({ id: 'no-such-task' }), 'TASK_NOT_FOUND');
  check(binding, 'GetTask of an unknown task: TaskNotFoundError', !unknown, unknown);

  // A stream dropped while the tool waits at the gate; subscribed again: the task as it stands, then the rest.
  rmSync(gate, { force: true });
  const gated = await client(binding, 'gated');
  const head = await collect(gated.sendMessageStream({ message: message('Go through.') }), 2);
  const gatedId = head[0]?.value?.id;
  const again = gated.resubscribeTask({ id: gatedId });
  const firstAgain = await again.next();
  writeFileSync(gate, 'open');
  const rest = [firstAgain.value?.payload, ...(await collect(again))];
  const restWhole = rest.find((e) => e?.$case === 'artifactUpdate' && e.value.lastChunk);
  check(binding, 'SubscribeToTask after a dropped stream: the task, then the rest',
        rest[0]?.$case === 'task' && rest[0].value.id === gatedId &&
        rest[0].value.status.state === TaskState.TASK_STATE_WORKING && restWhole &&
        textOf(restWhole.value.artifact.parts) === 'Through the gate.' &&
        rest[rest.length - 1]?.value?.status?.state === TaskState.TASK_STATE_COMPLETED,
        JSON.stringify(rest.map((e) => e?.$case)));

  // A task that waits for its client (a long-running call), answered with its id.
  const bank = await client(binding, 'bank');
  const asked = await bank.sendMessage({ message: message('Send 5000 euros to Bob.') });
  const call = asked.status?.message?.parts?.find((p) => p.metadata?.adk_is_long_running);
  check(binding, 'a task that waits for its client: INPUT_REQUIRED with the call',
        asked.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED && call?.content?.$case === 'data',
        JSON.stringify(asked.status).slice(0, 400));
  const answer = {
    content: { $case: 'data', value: { id: call?.content?.value?.id, name: 'ask_for_approval', response: { status: 'approved' } } },
    metadata: { adk_type: 'function_response' }, filename: '', mediaType: '',
  };
  const answered = await collect(bank.sendMessageStream({
    message: { ...message(''), parts: [answer], taskId: asked.id, contextId: asked.contextId } }));
  const answeredLast = answered[answered.length - 1];
  const answeredWhole = answered.find((e) => e.$case === 'artifactUpdate' && e.value.lastChunk);
  check(binding, 'the answer, sent with the task id, resumes it to its end',
        answered[0]?.$case === 'task' && answered[0].value.id === asked.id &&
        answeredWhole && textOf(answeredWhole.value.artifact.parts) === 'Approved: sent.' &&
        answeredLast?.value?.status?.state === TaskState.TASK_STATE_COMPLETED,
        JSON.stringify(answered).slice(0, 400));
  const ended = await expectError(bank.sendMessage({
    message: { ...message(''), parts: [answer], taskId: asked.id, contextId: asked.contextId } }), 'UNSUPPORTED_OPERATION');
  check(binding, 'a message to an ended task: UnsupportedOperationError', !ended, ended);

  // Push notifications: a webhook set on a running task hears of the rest of it, to its end.
  rmSync(gate, { force: true });
  const pushed = await collect(gated.sendMessageStream({ message: message('Go through.') }), 2);
  const pushedId = pushed[0]?.value?.id;
  const hookUrl = `http://127.0.0.1:${hookPort}/hooks/${binding}`;
  const config = await gated.createTaskPushNotificationConfig({ taskId: pushedId, url: hookUrl, token: 'tok-' + binding });
  const configs = await gated.listTaskPushNotificationConfig({ taskId: pushedId });
  check(binding, 'CreateTaskPushNotificationConfig, ListTaskPushNotificationConfigs',
        config.taskId === pushedId && config.id && configs.configs.length === 1 && configs.configs[0].url === hookUrl,
        JSON.stringify(configs));
  writeFileSync(gate, 'open');
  const mine = () => posts.filter((p) => p.path === `/hooks/${binding}`);
  for (let i = 0; i < 3000 && !mine().some((p) => p.body.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED'); i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  const heard = mine();
  const pushedAnswer = heard.find((p) => p.body.artifactUpdate?.lastChunk);
  check(binding, 'push notifications: the rest of the task, its answer and its end, with the token',
        heard.length >= 2 && heard.every((p) => p.token === 'tok-' + binding) &&
        pushedAnswer?.body.artifactUpdate.artifact.parts[0].text === 'Through the gate.' &&
        heard[heard.length - 1].body.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED',
        JSON.stringify(heard.map((p) => Object.keys(p.body)[0])));
  await gated.deleteTaskPushNotificationConfig({ taskId: pushedId, id: config.id });
  const left = await gated.listTaskPushNotificationConfig({ taskId: pushedId });
  check(binding, 'DeleteTaskPushNotificationConfig', left.configs.length === 0, JSON.stringify(left));

  // A failed task: FAILED with the model's error in its status, no answer.
  const broken = await client(binding, 'broken');
  const failed = await broken.sendMessage({ message: message('Hello?') });
  check(binding, 'a task whose model fails: its state and the error in its status, no artifact',
        failed.status?.state === TaskState.TASK_STATE_FAILED && failed.artifacts.length === 0 &&
        textOf(failed.status.message?.parts ?? []).includes('overloaded'), JSON.stringify(failed.status).slice(0, 300));
}

// A2A 0.3: the SDK's 0.3 transport speaks 0.3's JSON-RPC (message/send, message/stream, tasks/get, tasks/cancel,
// tasks/pushNotificationConfig/*).
{
  const legacy = new LegacyJsonRpcTransport({ endpoint: `${base}/a2a/weather` });
  const sent = await legacy.sendMessage({ message: message('Weather in Paris?') });
  check('0.3', 'message/send: a completed task with its answer',
        sent.status?.state === TaskState.TASK_STATE_COMPLETED && textOf(sent.artifacts[0]?.parts ?? []) === 'It is sunny in Paris.',
        JSON.stringify(sent).slice(0, 300));
  const events = await collect(legacy.sendMessageStream({ message: message('Weather in Paris?') }));
  const chunks = events.filter((e) => e.$case === 'artifactUpdate' && !e.value.lastChunk);
  const last = events[events.length - 1];
  check('0.3', 'message/stream: the task, its answer in chunks, its end',
        events[0]?.$case === 'task' && chunks.map((c) => textOf(c.value.artifact.parts)).join('') === 'It is sunny in Paris.' &&
        last?.$case === 'statusUpdate' && last.value.status.state === TaskState.TASK_STATE_COMPLETED,
        JSON.stringify(events.map((e) => e.$case)));
  const got = await legacy.getTask({ id: sent.id, historyLength: 1 });
  check('0.3', 'tasks/get', got.id === sent.id && got.status.state === TaskState.TASK_STATE_COMPLETED, JSON.stringify(got).slice(0, 300));
  const notCancelable = await expectError(legacy.cancelTask({ id: sent.id }), 'TASK_NOT_CANCELABLE');
  check('0.3', 'tasks/cancel of an ended task: TaskNotCancelableError', !notCancelable, notCancelable);

  // Push notifications over 0.3: a webhook with the message, then 0.3's tasks/pushNotificationConfig/* methods.
  const hookUrl = `http://127.0.0.1:${hookPort}/hooks/v03`;
  const pushed = await legacy.sendMessage({ message: message('Weather in Paris?'),
    configuration: { returnImmediately: true, acceptedOutputModes: [],
                     taskPushNotificationConfig: { tenant: '', taskId: '', id: '', url: hookUrl, token: 'v03-token' } } });
  const mine = () => posts.filter((p) => p.path === '/hooks/v03');
  for (let i = 0; i < 3000 && !mine().some((p) => p.body.kind === 'status-update' && p.body.status?.state === 'completed'); i++)
    await new Promise((r) => setTimeout(r, 10));
  check('0.3', 'push notifications in 0.3\'s JSON, with the token, to the task\'s end',
        mine().length > 0 && mine().every((p) => p.token === 'v03-token' && p.body.taskId === pushed.id) &&
        mine().some((p) => p.body.kind === 'status-update' && p.body.status?.state === 'completed'),
        JSON.stringify(mine().map((p) => p.body.kind)));
  const first = await legacy.getTaskPushNotificationConfig({ tenant: '', taskId: pushed.id, id: '' });
  check('0.3', 'tasks/pushNotificationConfig/get: the one set with the message',
        first.url === hookUrl && first.taskId === pushed.id, JSON.stringify(first));
  const made = await legacy.createTaskPushNotificationConfig({ tenant: '', taskId: pushed.id, id: 'second',
    url: `${hookUrl}/2`, token: '', authentication: { scheme: 'Bearer', credentials: 'hook-secret' } });
  check('0.3', 'tasks/pushNotificationConfig/set', made.id === 'second' && made.authentication?.scheme === 'Bearer',
        JSON.stringify(made));
  const listed = await legacy.listTaskPushNotificationConfig({ tenant: '', taskId: pushed.id, pageSize: 0, pageToken: '' });
  check('0.3', 'tasks/pushNotificationConfig/list', listed.configs.length === 2, JSON.stringify(listed));
  await legacy.deleteTaskPushNotificationConfig({ tenant: '', taskId: pushed.id, id: 'second' });
  const after = await legacy.listTaskPushNotificationConfig({ tenant: '', taskId: pushed.id, pageSize: 0, pageToken: '' });
  check('0.3', 'tasks/pushNotificationConfig/delete', after.configs.length === 1, JSON.stringify(after));
}

hook.close();
if (failures) {
  console.log(`a2a sdk interop: ${failures} FAILED`);
  process.exit(1);
}
console.log('a2a sdk interop: PASS');
