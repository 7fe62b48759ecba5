// The ADK web UI (@google/adk-devtools' own files) served by adk-cpp's `web` command, driven in Debian's
// chromium as a person uses it: open the server, pick an app, send a message with streaming on, see the
// streamed answer and the tool call, start a second session, list the sessions and reopen the first, and
// reload it from its address; then ask bank_agent for a transfer, see its confirmation request, approve it
// and see the tool run. Then, on MCP_BASE_URL (`adk web` over a YAML app whose MCP server asks for OAuth): send a
// message, authorize in the UI's popup, and see the server's tool answer. Then a graph workflow (refund_desk): its
// graph drawn, its question shown and answered in the UI, and the reply. Screenshots go to SCREENSHOT_DIR.
//   node web_ui_test.mjs BASE_URL SCREENSHOT_DIR MCP_BASE_URL
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';

const [base, shots, mcpBase] = process.argv.slice(2);
mkdirSync(shots, { recursive: true });
const answer = 'It is sunny and 22 degrees in Paris (from mock-llm).';
const failures = [];
function check(ok, what) {
  if (!ok) failures.push(what);
  console.log(`${ok ? 'ok' : 'FAIL:'} ${what}`);
}

// The first recorded run that `matches`, once its whole answer was read: the page shows an answer's text as its
// frames come, a moment before the response's body ends and the run is recorded (up to 20 s; else `none`).
async function recorded(list, matches, none) {
  for (let waited = 0; waited < 20000; waited += 50) {
    const found = list.find(matches);
    if (found) return found;
    await new Promise(resolve => setTimeout(resolve, 50));
  }
  return none;
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  // The UI's "Streaming" option (its more-options menu keeps it here): partial text as it comes.
  await context.addInitScript(() => localStorage.setItem('adk-use-sse', 'true'));
  const page = await context.newPage();
  const runs = [];
  const serverErrors = [];
  page.on('pageerror', e => serverErrors.push(`page error: ${e.message}`));
  page.on('response', async r => {
    if (r.status() >= 500) serverErrors.push(`${r.status()} ${r.request().method()} ${r.url()}`);
    if (r.url().endsWith('/run_sse'))
      runs.push({ status: r.status(), request: r.request().postData() || '', body: await r.text().catch(() => '') });
  });
  const send = async text => {
    const box = page.locator('textarea').first();
    await box.fill(text);
    await box.press('Enter');
  };

  // / leads to the UI, which lists the apps; pick one.
  await page.goto(base + '/');
  check(new URL(page.url()).pathname === '/dev-ui/', `/ leads to /dev-ui/ (at ${page.url()})`);
  await page.getByRole('button', { name: 'Select an app' }).click();
  for (const app of ['bank_agent', 'coordinator', 'refine_loop', 'research_pipeline', 'weather_agent'])
    check(await page.getByRole('button', { name: app }).count() === 1, `the app list offers ${app}`);
  await page.getByRole('button', { name: 'weather_agent' }).click();
  await page.waitForURL(/app=weather_agent/);

  // A message, answered in a stream with a tool call on the way.
  await send('What is the weather in Paris?');
  await page.getByText(answer).waitFor({ timeout: 20000 });
  check(await page.getByText('get_weather("Paris")').count() > 0, 'the tool call is shown: get_weather("Paris")');
  check(await page.getByText('State: user:last_city').count() > 0, "the tool's state change is shown");
  const run = await recorded(runs, () => true, { status: 0, body: '' });
  const frames = run.body.split('\n').filter(l => l.startsWith('data: ')).map(l => JSON.parse(l.slice(6)));
  check(run.status === 200, `/run_sse answered 200 (${run.status})`);
  const deltas = frames.filter(f => f.partial).map(f => f.content.parts.map(p => p.text).join(''));
  check(deltas.length === 5 && deltas.join('') === answer, `the answer came as 5 partial deltas (${JSON.stringify(deltas)})`);
  check(frames.some(f => f.content?.parts?.some(p => p.functionCall?.name === 'get_weather')), 'a frame carries the function call');
  const first = new URL(page.url()).searchParams.get('session');
  check(!!first, `the session is in the address (${page.url()})`);
  await page.screenshot({ path: `${shots}/01_answered.png` });

  // A second session, then the list of sessions, and the first one reopened from it.
  await page.getByRole('button', { name: /New Session/ }).click();
  await page.waitForFunction(s => new URL(location.href).searchParams.get('session') !== s, first).catch(() => {});
  await send('And in Rome?');
  await page.getByText('And in Rome?').first().waitFor({ timeout: 20000 });
  await page.getByText(answer).waitFor({ timeout: 20000 });
  const second = new URL(page.url()).searchParams.get('session');
  check(second && second !== first, `a new session (${second})`);
  await page.getByRole('button', { name: /And in Rome\?/ }).first().click();
  const listed = page.getByText('What is the weather in Paris?');
  await listed.first().waitFor({ timeout: 10000 });
  check(await page.getByText(first.slice(0, 20), { exact: false }).count() > 0, 'the session list shows the first session');
  await page.screenshot({ path: `${shots}/02_sessions.png` });
  await listed.first().click();
  await page.waitForFunction(s => new URL(location.href).searchParams.get('session') === s, first, { timeout: 10000 });
  await page.getByText(answer).waitFor({ timeout: 10000 });
  check(await page.getByText('And in Rome?').count() === 0, 'the reopened session shows its own messages only');
  check(await page.getByText('get_weather("Paris")').count() > 0, 'the reopened session shows its tool call');
  await page.screenshot({ path: `${shots}/03_reopened.png` });

  // The first session from its address, in a fresh page: read back from the server.
  const fresh = await context.newPage();
  await fresh.goto(`${base}/dev-ui/?app=weather_agent&userId=user&session=${first}`);
  await fresh.getByText(answer).waitFor({ timeout: 15000 });
  check(await fresh.getByText('What is the weather in Paris?').count() > 0, 'a fresh page shows the stored conversation');
  await fresh.screenshot({ path: `${shots}/04_reloaded.png` });

  // Human in the loop: the transfer waits for a confirmation, which the UI shows and answers.
  const bank = await context.newPage();
  bank.on('pageerror', e => serverErrors.push(`page error: ${e.message}`));
  bank.on('response', async r => {
    if (r.status() >= 500) serverErrors.push(`${r.status()} ${r.request().method()} ${r.url()}`);
    if (r.url().endsWith('/run_sse'))
      runs.push({ status: r.status(), request: r.request().postData() || '', body: await r.text().catch(() => '') });
  });
  const before = runs.length;
  await bank.goto(`${base}/dev-ui/?app=bank_agent`);
  const bankBox = bank.locator('textarea').first();
  await bankBox.waitFor({ timeout: 15000 });
  await bankBox.fill('Send 100 euros to Alice');
  await bankBox.press('Enter');
  const confirmed = bank.getByText('Confirmed', { exact: true });
  await confirmed.first().waitFor({ timeout: 20000 });
  check(await bank.getByText("Approve or reject the call of tool 'transfer_money'.").count() > 0,
        'the confirmation request shows its hint');
  await bank.screenshot({ path: `${shots}/05_confirmation.png` });
  const asked = (await recorded(runs, (r, i) => i >= before, { body: '' })).body;
  check(asked.includes('"name":"adk_request_confirmation"') && !asked.includes('"status":"sent"'),
        'the transfer waits for the confirmation: it did not run');
  await bank.locator('input[id^="confirmed-checkbox-standalone-"]').first().check();
  await bank.getByRole('button', { name: 'Submit' }).first().click();
  await bank.getByText('Done: 100 euros went to Alice.').waitFor({ timeout: 20000 });
  const answer_run = await recorded(runs, (r, i) => i >= before && r.request.includes('adk_request_confirmation'),
                                    { request: '', body: '' });
  const sent = answer_run.request ? JSON.parse(answer_run.request) : {};
  const reply = sent.newMessage?.parts?.[0]?.functionResponse;
  check(reply?.name === 'adk_request_confirmation' && reply?.response?.confirmed === true && !!sent.functionCallEventId,
        `the UI answered with the confirmation (${answer_run.request.slice(0, 300)})`);
  check(answer_run.status === 200 && answer_run.body.includes('"status":"sent"'), 'the approved transfer ran');
  await bank.screenshot({ path: `${shots}/06_approved.png` });

  // An MCP server behind OAuth: the UI opens the authorization in a popup, which comes back to /dev-ui/ with the
  // code; the UI answers adk_request_credential with it, and the agent lists and calls the server's tools.
  const mcp = await context.newPage();
  const mcpRuns = [];
  mcp.on('pageerror', e => serverErrors.push(`page error: ${e.message}`));
  mcp.on('response', async r => {
    if (r.status() >= 500) serverErrors.push(`${r.status()} ${r.request().method()} ${r.url()}`);
    if (r.url().endsWith('/run_sse'))
      mcpRuns.push({ status: r.status(), request: r.request().postData() || '', body: await r.text().catch(() => '') });
  });
  await mcp.goto(`${mcpBase}/dev-ui/?app=mcp_oauth_agent`);
  const mcpBox = mcp.locator('textarea').first();
  await mcpBox.waitFor({ timeout: 15000 });
  const popup = context.waitForEvent('page', { timeout: 20000 });
  await mcpBox.fill('Echo this through the MCP server');
  await mcpBox.press('Enter');
  const authorization = await popup;
  await authorization.waitForEvent('close', { timeout: 20000 });
  check(authorization.url().startsWith(`${mcpBase}/dev-ui/?code=`),
        `the popup came back to the UI's page with a code (${authorization.url().split('?')[0]})`);
  await mcp.getByText('The server echoed it.').waitFor({ timeout: 20000 });
  const askedRun = await recorded(mcpRuns, () => true, { body: '' });
  check(askedRun.body.includes('"name":"adk_request_credential"') && askedRun.body.includes('"authUri"'),
        'the first run asked for the credential with an authUri');
  const credentialReply = await recorded(mcpRuns, r => r.request.includes('adk_request_credential'), { request: '', body: '' });
  const replied = credentialReply.request ? JSON.parse(credentialReply.request).newMessage?.parts?.[0]?.functionResponse : undefined;
  check(!!replied?.response?.exchangedAuthCredential?.oauth2?.authResponseUri,
        `the UI answered with the URL the person came back to (${credentialReply.request.slice(0, 200)})`);
  check(credentialReply.body.includes("echo from the web UI"), `the agent called the server's echo tool (${credentialReply.body.slice(0, 300)})`);
  check(!credentialReply.body.includes("access_token") && !credentialReply.body.includes("\"at-"), "no token reaches the client");
  await mcp.screenshot({ path: `${shots}/07_mcp_oauth.png` });

  // A graph workflow (refund_desk, agent-config YAML with C++ nodes): the UI draws its graph, shows the question
  // its approve_refund node asks (RequestInput), and the person's answer there resumes it to the reply.
  const desk = await context.newPage();
  const deskRuns = [];
  const graphs = [];
  desk.on('pageerror', e => serverErrors.push(`page error: ${e.message}`));
  desk.on('response', async r => {
    if (r.status() >= 500) serverErrors.push(`${r.status()} ${r.request().method()} ${r.url()}`);
    if (r.url().includes('/build_graph_image')) graphs.push(await r.text().catch(() => ''));
    if (r.url().endsWith('/run_sse'))
      deskRuns.push({ status: r.status(), request: r.request().postData() || '', body: await r.text().catch(() => '') });
  });
  await desk.goto(`${base}/dev-ui/?app=refund_desk`);
  const deskBox = desk.locator('textarea').first();
  await deskBox.waitFor({ timeout: 15000 });
  await deskBox.fill('I want my money back for order A-17');
  await deskBox.press('Enter');
  const question = desk.getByText('Refund 30 euros for order A-17? Answer yes or no.');
  await question.first().waitFor({ timeout: 20000 });
  check(await desk.getByText('route: refund').count() > 0, "the router's route is shown (route: refund)");
  check(graphs.some(g => g.includes('approve_refund') && g.includes('refund_replier') && g.includes('  refund')),
        'the workflow graph is drawn with its nodes and its route');
  const asking = await recorded(deskRuns, () => true, { body: '' });
  check(asking.body.includes('"name":"adk_request_input"') && asking.body.includes('"longRunningToolIds"') &&
        !asking.body.includes('refund_replier'), 'the workflow paused at the question (adk_request_input)');
  await desk.screenshot({ path: `${shots}/08_workflow_question.png` });
  const response = desk.getByPlaceholder('Enter your response...');
  await response.fill('yes');
  await response.press('Enter');
  const deskReply = 'Good news: your refund of 30 euros for order A-17 is on its way.';
  await desk.getByText(deskReply, { exact: true }).waitFor({ timeout: 20000 });
  const answered = await recorded(deskRuns, r => r.request.includes('adk_request_input'), { request: '', body: '', status: 0 });
  const answerPart = answered.request ? JSON.parse(answered.request).newMessage?.parts?.[0]?.functionResponse : undefined;
  check(answerPart?.name === 'adk_request_input' && answerPart?.response?.result === 'yes',
        `the UI answered the question (${answered.request.slice(0, 300)})`);
  check(answered.status === 200 && answered.body.includes('A manager approved the refund') &&
        answered.body.includes('"refund_approved":true'), 'the answer resumed the node that asked, which approved');
  check(!answered.body.includes('"name":"adk_request_input"'), 'the question was not asked again');
  await desk.screenshot({ path: `${shots}/09_workflow_answered.png` });

  check(serverErrors.length === 0, `no server error or page error (${serverErrors.join('; ')})`);
} catch (e) {
  failures.push(String(e));
  console.log(`FAIL: ${e}`);
} finally {
  await browser.close();
}
console.log(`screenshots: ${shots}`);
console.log(failures.length ? `web ui: FAIL (${failures.length})` : 'web ui: PASS');
process.exit(failures.length ? 1 : 0);
