#!/usr/bin/env python3
"""Seeds tests/fuzz/corpus/ from the recorded fixtures in tests/fixtures (run from anywhere):

    python3 tests/fuzz/seed_corpus.py

sse_parser       every recorded provider stream, as recorded
provider_stream  the provider's letter (g, o, a), then its recorded stream or whole body
json_decode      sessions and events an ADK server wrote, events of its /run_sse streams, and the content of
                 every candidate in the recorded Gemini streams
json_schema      [schema, arguments] from the recorded requests' tools and the calls that answered them
The seeds of a2a_json (A2A 1.0 documents), traceparent (W3C headers), session_row (stored rows), memory_query (users' queries) and request_target (the server's request
targets) are written by hand and kept.
The fuzzers add what they find to a scratch corpus (tools/fuzz.sh); only these seeds are checked in."""
import json
import pathlib
import shutil

here = pathlib.Path(__file__).resolve().parent
fixtures = here.parent / "fixtures"
corpus = here / "corpus"
for name in ("sse_parser", "provider_stream", "json_decode", "json_schema"):
    shutil.rmtree(corpus / name, ignore_errors=True)  # the hand-written seeds (session_row/ ...) are kept
    (corpus / name).mkdir(parents=True)
providers = fixtures / "providers"


def data_lines(path):
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("data:") and "{" in line:
            try:
                yield json.loads(line[5:].strip())
            except json.JSONDecodeError:
                pass


for sse in sorted(providers.glob("*/*.sse")):
    shutil.copy(sse, corpus / "sse_parser" / f"{sse.parent.name}_{sse.name}")

letters = {"gemini": "g", "openai_chat": "o", "ollama": "o", "anthropic": "a"}
for folder, letter in letters.items():
    for f in sorted((providers / folder).iterdir()):
        if f.name.endswith(".request.json") or f.suffix not in (".sse", ".json"):
            continue
        (corpus / "provider_stream" / f"{letter}_{f.name}").write_bytes(letter.encode() + f.read_bytes())

samples = fixtures / "adk" / "api_samples"
for name in ("get_session", "list_sessions", "create_session_state", "create_session_with_id", "import_session",
             "patch_session", "run_unary", "get_artifact", "artifact_version0"):
    if (samples / f"{name}.body").exists():
        shutil.copy(samples / f"{name}.body", corpus / "json_decode" / f"{name}.json")
for name in ("run_sse_stream", "run_sse_pipeline"):
    for i, event in enumerate(data_lines(samples / f"{name}.body")):
        (corpus / "json_decode" / f"{name}_{i:03}.json").write_text(json.dumps(event))
for sse in sorted((providers / "gemini").glob("*.sse")):
    for i, chunk in enumerate(data_lines(sse)):
        for c, candidate in enumerate(chunk.get("candidates") or []):
            if "content" in candidate:
                (corpus / "json_decode" / f"gemini_{sse.stem}_{i:03}_{c}.json").write_text(json.dumps(candidate["content"]))

# Schemas of the recorded requests' tools, each with the arguments a recorded call gave (or {}).
calls = {}
for sse in sorted(providers.glob("*/*.sse")):
    for chunk in data_lines(sse):
        for candidate in chunk.get("candidates") or []:
            for part in (candidate.get("content") or {}).get("parts") or []:
                if "functionCall" in part:
                    calls[part["functionCall"].get("name")] = part["functionCall"].get("args", {})
n = 0
for request in sorted(providers.glob("*/*.request.json")):
    body = json.loads(request.read_text())
    for tool in body.get("tools") or []:
        declarations = tool.get("functionDeclarations") or ([tool.get("function")] if "function" in tool else [tool])
        for d in declarations:
            if not isinstance(d, dict):
                continue
            schema = d.get("parametersJsonSchema") or d.get("parameters") or d.get("input_schema")
            if schema:
                (corpus / "json_schema" / f"{request.stem}_{n:03}.json").write_text(
                    json.dumps([schema, calls.get(d.get("name"), {})]))
                n += 1
print({p.name: len(list(p.iterdir())) for p in corpus.iterdir()})
