#!/usr/bin/env bash
# The adk command line as people run it: the stand-alone adk program and samples/agents' sample_agents (the
# same with a tool of its own), against mock-llm. Usage errors and their exit codes; `run` as a terminal
# chat on a pipe (streamed text, tool calls, a session continued with --session and --resume after the
# program ended); `api_server` and `web` over loopback with curl (apps, a run over /run_sse, the web UI's
# files); a YAML error named by file and line; SIGTERM stops the server.
#   adk_cli_test.sh ADK SAMPLE_AGENTS MOCK_LLM SAMPLES_DIR
set -euo pipefail
adk=$1 samples_program=$2 mock=$3 samples=$4
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"
export GEMINI_API_KEY=test-key  # no request leaves loopback: until mock-llm starts, no run is made

# Usage: --help exits 0; a bad command, flag or missing value exits 2 with the usage.
"$adk" --help >out 2>&1 || fail "adk --help exited $?"
grep -q "usage: adk COMMAND" out || fail "adk --help: $(cat out)"
"$adk" web --help >out 2>&1 || fail "adk web --help exited $?"
grep -q -- "--session_service_uri" out && grep -q -- "--ui_dir" out || fail "adk web --help: $(cat out)"
expect_exit() {
  local want=$1 text=$2
  shift 2
  set +e
  "$@" >out 2>err </dev/null
  local status=$?
  set -e
  [ "$status" = "$want" ] || fail "$* exited $status, not $want: $(cat err)"
  grep -qF -- "$text" err || fail "$*: no message '$text': $(cat err)"
}
expect_exit 2 "unknown command 'serve'" "$adk" serve
expect_exit 2 "unknown flag '--prot' for web" "$adk" web --prot 80
expect_exit 2 "--port needs a value" "$adk" api_server --port
expect_exit 2 "name the app: adk run AGENTS_DIR/APP" "$adk" run
expect_exit 1 "nowhere/root_agent.yaml does not exist" "$adk" run nowhere
expect_exit 1 "holds no app" "$adk" api_server "$work"
expect_exit 1 "--port takes a whole number from 0 to 65535" "$samples_program" api_server --port 99999 "$samples"
# The tool of the samples is not the stand-alone program's: its YAML error says which tools there are.
expect_exit 1 "'tools': no tool named 'transfer_money' is registered (known: exit_loop, load_artifacts" \
  "$adk" api_server "$samples"
grep -qF "bank_agent/root_agent.yaml:14:11:" err || fail "the YAML error does not name file, line, column: $(cat err)"
# A provider without its key: the message names the agent and the variable.
env -u GEMINI_API_KEY -u GOOGLE_API_KEY -u GOOGLE_GENAI_USE_VERTEXAI \
  "$samples_program" api_server "$samples" >out 2>err </dev/null && fail "served without a key"
grep -q "GEMINI_API_KEY" err || fail "no word of the missing key: $(cat err)"

# mock-llm plays every agent of the samples.
"$mock" --port 0 --script "$samples/mock_script.json" >mock.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s mock.log ] && break; sleep 0.05; done
mock_url=$(sed -n '1s/^listening on //p' mock.log)
[ -n "$mock_url" ] || fail "mock-llm did not start: $(cat mock.log)"
export GOOGLE_GEMINI_BASE_URL=$mock_url

# run: a chat on a pipe. Sessions go to .adk/sessions.db in the working directory by default.
printf 'What is the weather in Paris?\n\nexit\n' | "$samples_program" run "$samples/weather_agent" >chat.out 2>chat.err ||
  fail "run exited $?: $(cat chat.err)"
grep -qF '[weather_agent] calls get_weather({"city":"Paris"})' chat.out || fail "run: no tool call: $(cat chat.out)"
grep -qF '[weather_agent] get_weather returned {"city":"Paris","sky":"sunny"' chat.out || fail "run: no tool result"
grep -qF '[weather_agent]: It is sunny and 22 degrees in Paris (from mock-llm).' chat.out || fail "run: no answer"
[ -f .adk/sessions.db ] || fail "run: no .adk/sessions.db"
session=$(sed -n 's/.* in session \([^ ]*\) (continue it later.*/\1/p' chat.out)
[ -n "$session" ] || fail "run: no session id printed: $(cat chat.out)"
# The same session, by id and as the latest, after the program ended: the history shows, the talk goes on.
printf 'And tomorrow?\n' | "$samples_program" run --session "$session" "$samples/weather_agent" >again.out 2>&1 ||
  fail "run --session exited $?: $(cat again.out)"
grep -qF "in session $session " again.out || fail "run --session: another session: $(cat again.out)"
grep -qF "(continuing; the conversation so far:)" again.out || fail "run --session: no history"
grep -qF "[user]: What is the weather in Paris?" again.out || fail "run --session: the first question is not shown"
[ "$(grep -c 'It is sunny and 22 degrees' again.out)" = 2 ] || fail "run --session: not the old and a new answer"
printf "" | "$samples_program" run --resume "$samples/weather_agent" >resume.out 2>&1 || fail "run --resume exited $?: $(cat resume.out)"
grep -qF "in session $session " resume.out || fail "run --resume did not pick the latest session: $(cat resume.out)"
[ "$(grep -c 'And tomorrow?' resume.out)" = 1 ] || fail "run --resume: the second turn is not in the history"
# Event compaction from the command line: every invocation here, summarized by the app's own model (mock-llm's
# default turns answer the summarizer); `run` waits for the last summary before it exits. ADK's database format
# writes the JSON in snake_case.
expect_exit 1 "--compaction_overlap and --compaction_retention go with" \
  "$samples_program" run --compaction_overlap 2 "$samples/weather_agent"
printf 'What is the weather in Paris?\nAnd tomorrow?\nexit\n' |
  "$samples_program" run --session_service_uri sqlite:///compacted.db --compaction_interval 1 "$samples/weather_agent" \
  >compacted.out 2>&1 || fail "run --compaction_interval exited $?: $(cat compacted.out)"
[ "$(grep -c 'It is sunny and 22 degrees' compacted.out)" = 2 ] || fail "run --compaction_interval: $(cat compacted.out)"
[ "$(cat compacted.db compacted.db-wal 2>/dev/null | grep -ac '"compacted_content"')" -ge 1 ] ||
  fail "run --compaction_interval stored no compaction: $(cat compacted.out)"
# Another app of the folder: a LoopAgent whose critic ends it.
printf 'Autumn\n' | "$samples_program" run --session_service_uri memory:// "$samples/refine_loop" >loop.out 2>&1 ||
  fail "run refine_loop exited $?: $(cat loop.out)"
grep -qF "[critic] calls exit_loop({})" loop.out || fail "refine_loop: the critic did not end the loop: $(cat loop.out)"

# Human in the loop: transfer_money is approved at the prompt; request_approval's answer comes from a second
# command after the first ended (a restart: the session is read back from .adk/sessions.db).
printf 'Send 100 euros to Alice\ny\nI need 5000 for a new car\nexit\n' |
  "$samples_program" run --resumable "$samples/bank_agent" >bank.out 2>bank.err || fail "run bank_agent exited $?: $(cat bank.err)"
grep -qF '[approve] "transfer_money" with {"amount":100,"to":"Alice"}? [y/n]: ' bank.out || fail "bank: no approval asked: $(cat bank.out)"
grep -qF '[bank_agent] transfer_money returned {"status":"sent","amount":100,"to":"Alice","approved":true}' bank.out ||
  fail "bank: the approved transfer did not run: $(cat bank.out)"
grep -qF '[bank_agent]: Done: 100 euros went to Alice.' bank.out || fail "bank: no answer after the transfer"
grep -qF '[waiting] request_approval answers later' bank.out || fail "bank: the long-running call is not shown: $(cat bank.out)"
bank_session=$(sed -n 's/.* in session \([^ ]*\) (continue it later.*/\1/p' bank.out)
call=$(sed -n 's/.* --answer \([^ ]*\) --response.*/\1/p' bank.out)
[ -n "$call" ] && [ -n "$bank_session" ] || fail "bank: no call id or session printed: $(cat bank.out)"
printf 'exit\n' | "$samples_program" run --resumable "$samples/bank_agent" --session "$bank_session" --answer "$call" \
  --response '{"status": "approved"}' >later.out 2>&1 || fail "run --answer exited $?: $(cat later.out)"
grep -qF 'the transfer of 5000 euros is approved.' later.out || fail "bank: the later answer did not reach the model: $(cat later.out)"
# The same answer again is refused and says why; a bad --response is refused before anything is sent.
printf 'exit\n' | "$samples_program" run --resumable "$samples/bank_agent" --session "$bank_session" --answer "$call" \
  --response '{"status": "approved"}' >twice.out 2>&1 && fail "a second answer was taken"
grep -qF "was already answered" twice.out || fail "bank: a second answer is not refused clearly: $(cat twice.out)"
expect_exit 2 "--answer needs --session" "$samples_program" run "$samples/bank_agent" --answer x --response '{}'
# A rejection: the tool does not run and the model hears why.
printf 'Send 100 euros to Alice\nn\nexit\n' |
  "$samples_program" run --session_service_uri memory:// "$samples/bank_agent" >reject.out 2>&1 || fail "run (reject) exited $?"
grep -qF '[bank_agent] transfer_money returned {"error":"This tool call was rejected' reject.out ||
  fail "bank: the rejection did not reach the model: $(cat reject.out)"

# api_server: the apps and a streamed run over HTTP; SIGTERM stops it.
start_server() {  # start_server LOG ARGS...: sets $base from the first line
  local log=$1
  shift
  "$@" >"$log" 2>&1 &
  server_pid=$!
  pids+=($server_pid)
  for _ in $(seq 200); do grep -q "serving" "$log" 2>/dev/null && break; sleep 0.05; done
  base=$(sed -n 's/.* at \(http:\/\/127\.0\.0\.1:[0-9]*\).*/\1/p' "$log" | head -1)
  [ -n "$base" ] || fail "the server did not start: $(cat "$log")"
}
start_server api.log "$samples_program" api_server --port 0 --session_service_uri "sqlite:///$work/api.db" "$samples"
[ "$(curl -sf "$base/list-apps")" = '["bank_agent","coordinator","refine_loop","refund_desk","research_pipeline","weather_agent"]' ] ||
  fail "list-apps: $(curl -s "$base/list-apps")"
sid=$(curl -sf -X POST "$base/apps/weather_agent/users/u1/sessions" | sed 's/.*"id":"\([^"]*\)".*/\1/')
curl -sfN -X POST "$base/run_sse" -H 'content-type: application/json' \
  -d "{\"appName\":\"weather_agent\",\"userId\":\"u1\",\"sessionId\":\"$sid\",\"streaming\":true,
       \"newMessage\":{\"role\":\"user\",\"parts\":[{\"text\":\"Weather in Paris?\"}]}}" >sse.out ||
  fail "run_sse failed"
grep -q '"functionCall":{"id":"[^"]*","args":{"city":"Paris"},"name":"get_weather"}\|"functionCall":{.*"name":"get_weather"' sse.out ||
  fail "run_sse: no function call frame: $(head -c 2000 sse.out)"
grep -q '"partial":true' sse.out || fail "run_sse: no partial frames with streaming"
grep -q '"text":"It is sunny and 22 degrees in Paris (from mock-llm)."' sse.out || fail "run_sse: no final text"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/dev-ui/")" = 404 ] || fail "api_server serves the web UI"
kill -TERM "$server_pid"
for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$server_pid" 2>/dev/null && fail "api_server did not stop on SIGTERM"
wait "$server_pid" || fail "api_server exited $? on SIGTERM"
# What the run stored survives the server: the session in the SQLite file has its events.
start_server api2.log "$samples_program" api_server --port 0 --session_service_uri "sqlite:///$work/api.db" "$samples"
events=$(curl -sf "$base/apps/weather_agent/users/u1/sessions/$sid" | grep -o '"author":' | wc -l)
[ "$events" -ge 4 ] || fail "the session has $events events after a restart, not the 4 of the run"

# web: the UI's files from a folder, the API beside them; no UI folder is a clear error.
mkdir -p ui/assets/config
echo '<!doctype html><title>ADK</title>' >ui/index.html
echo 'export {}' >ui/main-T.js
expect_exit 1 "the ADK web UI's files are not in $work/none" "$samples_program" web --ui_dir "$work/none" --port 0 "$samples"
start_server web.log "$samples_program" web --port 0 --ui_dir "$work/ui" --session_service_uri memory:// "$samples"
grep -q "/dev-ui/" web.log || fail "web does not print the UI's address: $(cat web.log)"
[ "$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "$base/")" = "302 $base/dev-ui/" ] || fail "/ does not lead to /dev-ui/"
curl -sf "$base/dev-ui/" | grep -q '<title>ADK</title>' || fail "web: no index.html"
[ "$(curl -s -o /dev/null -w '%{content_type}' "$base/dev-ui/main-T.js")" = "text/javascript; charset=utf-8" ] ||
  fail "web: .js is not JavaScript"
[ "$(curl -sf "$base/dev-ui/assets/config/runtime-config.json")" = '{"backendUrl":""}' ] || fail "web: runtime config"
curl -sf "$base/list-apps" | grep -q weather_agent || fail "web: no API beside the UI"
# Off loopback: refused without a token.
expect_exit 1 "off loopback" "$samples_program" api_server --host 0.0.0.0 --port 0 "$samples"
echo "adk command line: PASS"
