"""A scripted, OpenAI-compatible chat-completions server for ARI's tests (see README.md).

Listens on 127.0.0.1 only. Every request is answered by the first rule of a script
(``script.py``'s ``RULES``) whose ``when`` matches it; the rule's ``reply`` builds the message
(text or tool calls). Each request is appended to a JSON-lines log: time, sequence number,
endpoint path, model, the stage the script recognised, the names of the tools offered,
tool_choice, whether an Authorization header came (never its value).

    python -m scripted_llm.server --log FILE [--port 0] [--dump-dir DIR]

prints ``http://127.0.0.1:<port>/v1`` on its first stdout line once it listens.
``--dump-dir`` also keeps each request's body (messages and tools, never headers) for
writing new rules.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scripted_llm.script import PLAIN, Options, Request, answer  # noqa: E402


class _State:
    def __init__(self, log: Path, dump_dir: Path | None) -> None:
        self.log = log
        self.dump_dir = dump_dir
        self.lock = threading.Lock()
        self.seq = 0
        self.counters: dict[str, int] = {}
        self.options = PLAIN
        # open: answer at once; cleared by a test, every request waits until it is set again,
        # as ARI waits on a model that takes its time (ARI stays alive, its run goes nowhere)
        self.gate = threading.Event()
        self.gate.set()

    def next(self, stage: str) -> tuple[int, int]:
        """The request's sequence number and how many earlier requests had this stage."""
        with self.lock:
            self.seq += 1
            nth = self.counters.get(stage, 0)
            self.counters[stage] = nth + 1
            return self.seq, nth

    def record(self, entry: dict, body: dict | None) -> None:
        with self.lock:
            with self.log.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
            if self.dump_dir is not None and body is not None:
                self.dump_dir.mkdir(parents=True, exist_ok=True)
                (self.dump_dir / f"{entry['seq']:04d}-{entry['stage']}.json").write_text(
                    json.dumps(body, ensure_ascii=False, indent=1))


def _completion(model: str, message: dict, seq: int) -> dict:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {"id": f"chatcmpl-scripted-{seq}", "object": "chat.completion",
            "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def _chunks(model: str, message: dict, seq: int):
    """The same answer as server-sent events (``stream: true``)."""
    base = {"id": f"chatcmpl-scripted-{seq}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}
    delta: dict = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("tool_calls"):
        delta["tool_calls"] = [dict(tc, index=i) for i, tc in enumerate(message["tool_calls"])]
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}


class Handler(BaseHTTPRequestHandler):
    server_version = "scripted-llm/1"
    state: _State

    def log_message(self, fmt, *args):  # quiet: the JSON-lines log is the record
        pass

    def _send(self, code: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._send(404, {"error": {"message": f"no such endpoint: {self.path}"}})

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "path": path,
                 "authorization": bool(self.headers.get("Authorization") or self.headers.get("api-key"))}
        if not path.rstrip("/").endswith("/chat/completions") or not isinstance(body, dict):
            seq, _ = self.state.next("unknown")
            entry.update(seq=seq, stage="unknown", model=(body or {}).get("model") if isinstance(body, dict) else None)
            self.state.record(entry, body)
            self._send(404, {"error": {"message": f"scripted LLM serves /v1/chat/completions, not {path}"}})
            return
        self.state.gate.wait()
        request = Request.from_body(body)
        stage = request.stage()
        seq, nth = self.state.next(stage)
        try:
            message, rule = answer(request, nth, self.state.options)
        except Exception as exc:  # a script bug: answer with an error the caller shows
            entry.update(seq=seq, stage=stage, model=body.get("model"), tools=request.tool_names,
                         error=f"{type(exc).__name__}: {exc}")
            self.state.record(entry, body)
            self._send(500, {"error": {"message": f"scripted LLM: {type(exc).__name__}: {exc}"}})
            return
        if rule == "job_status" and self.state.options.status_wait_s:
            time.sleep(self.state.options.status_wait_s)
        entry.update(seq=seq, stage=stage, nth=nth, rule=rule, model=body.get("model"),
                     tools=request.tool_names, tool_choice=body.get("tool_choice"),
                     stream=bool(body.get("stream")),
                     replied=[tc["function"]["name"] for tc in message.get("tool_calls") or []]
                     or "text")
        self.state.record(entry, body)
        model = str(body.get("model") or "scripted")
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for chunk in _chunks(model, message, seq):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        else:
            self._send(200, _completion(model, message, seq))


def serve(log: Path, port: int = 0, dump_dir: Path | None = None,
          options: Options = PLAIN) -> ThreadingHTTPServer:
    """A started server (in a daemon thread); ``.server_address[1]`` is its port."""
    state = _State(Path(log), dump_dir)
    state.options = options
    handler = type("BoundHandler", (Handler,), {"state": state})
    httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
    httpd.daemon_threads = True
    httpd.gate = state.gate  # clear() holds every answer until set()
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", required=True, type=Path)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--dump-dir", type=Path)
    args = parser.parse_args(argv)
    httpd = serve(args.log, args.port, args.dump_dir)
    print(f"http://127.0.0.1:{httpd.server_address[1]}/v1", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
