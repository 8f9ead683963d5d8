#!/usr/bin/env python3
"""A scripted OpenAI-compatible model server on 127.0.0.1, for the agent specs.

    python3 tests/agents/server.py --script SCRIPT.json --log LOG.jsonl \
        [--models ok|slow|never] [--lifetime SECONDS] [--call-prefix call]

Prints `PORT <n>` once it listens (an ephemeral port), then answers:

* `POST .../chat/completions` with `"stream": true`: the next answer of the script, streamed as Server-Sent
  Events the way OpenAI's API streams them: a role chunk, then each tool call as a chunk
  with its id and name followed by its arguments in several pieces, or the text in pieces,
  then a finish chunk, a usage chunk and `data: [DONE]`. A script entry is
  `{"tool_calls": [["todo", "<arguments JSON>"], ...]}` or `{"text": "..."}`; once the
  script is used up every answer is the text "Done.".
  Without `"stream": true` (a background request) the same answer comes whole, as one
  `chat.completion` JSON object.
* `POST .../responses` (OpenAI's Responses API, streamed): the next answer of the same
  script as Responses events: `response.created`, a `compaction` output item first when
  the entry has `"compaction": true` (what a server that compacted the context sends),
  the text as `response.output_text.delta` events, and `response.completed` whose output
  holds the function calls (`call_<n>_<i>`) and the message.
* `GET .../models`: `ok` answers at once, `slow` after 3 seconds, `never` holds the
  connection open until the server stops (what a dead endpoint does).

Tool call ids are `<prefix>_<request>_<call>` (`--call-prefix`, default `call`: a second
server of one test story gives its own, so a chat continued from the first one's history
never sees an id twice). Every request is appended to the log as one JSON line: {"method", "path", "body"}
(body decoded when it is JSON), written before the answer starts. The server exits by
itself after --lifetime seconds (default 120), so a test that dies cannot leave it behind.
Nothing but 127.0.0.1 is ever bound or contacted.
"""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STOP = threading.Event()


def pieces(text, n=3):
    """Split text into up to n non-empty consecutive parts (a stream's deltas)."""
    if len(text) < n:
        return [text] if text else []
    size = -(-len(text) // n)
    return [text[i:i + size] for i in range(0, len(text), size)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # the body ends when the connection closes
    server_version = "rpiv-scripted/1"

    def log_message(self, *args):  # no stderr noise
        pass

    def record(self, body):
        try:
            decoded = json.loads(body) if body else None
        except ValueError:
            decoded = body.decode("utf-8", "replace")
        with LOCK:
            with open(self.server.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"method": self.command, "path": self.path, "body": decoded}) + "\n")

    def do_GET(self):
        self.record(b"")
        if self.path.rstrip("/").endswith("/models"):
            if self.server.models == "never":
                STOP.wait()
                return
            if self.server.models == "slow":
                STOP.wait(3)
            self.send_json({"object": "list", "data": [{"id": "scripted-model", "object": "model"}]})
            return
        self.send_json({"error": "not found"}, 404)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.record(body)
        responses = self.path.rstrip("/").endswith("/responses")
        if not responses and not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_json({"error": "not found"}, 404)
            return
        with LOCK:
            answer = self.server.script.pop(0) if self.server.script else {"text": "Done."}
            self.server.count += 1
            n = self.server.count
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        try:
            streamed = json.loads(body).get("stream") is True
        except (ValueError, AttributeError):
            streamed = False
        if responses:
            self.stream_responses(answer, n, usage)
            return
        if not streamed:
            message = {"role": "assistant", "content": answer.get("text")}
            if "tool_calls" in answer:
                message["tool_calls"] = [
                    {"id": f"{self.server.call_prefix}_{n}_{i + 1}", "type": "function",
                     "function": {"name": name, "arguments": arguments}}
                    for i, (name, arguments) in enumerate(answer["tool_calls"])]
            self.send_json({"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000 + n,
                            "model": "scripted-model", "usage": usage,
                            "choices": [{"index": 0, "message": message,
                                         "finish_reason": "tool_calls" if "tool_calls" in answer else "stop"}]})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 1700000000 + n,
                "model": "scripted-model"}

        def chunk(delta, finish=None, usage=None):
            data = dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
            if usage is not None:
                data = dict(base, choices=[], usage=usage)
            self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
            self.wfile.flush()

        chunk({"role": "assistant", "content": ""})
        if "tool_calls" in answer:
            for i, (name, arguments) in enumerate(answer["tool_calls"]):
                chunk({"tool_calls": [{"index": i, "id": f"{self.server.call_prefix}_{n}_{i + 1}", "type": "function",
                                       "function": {"name": name, "arguments": ""}}]})
                for part in pieces(arguments):
                    chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
            chunk({}, "tool_calls")
        else:
            for part in pieces(answer.get("text", "")):
                chunk({"content": part})
            chunk({}, "stop")
        chunk({}, usage=usage)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def stream_responses(self, answer, n, usage):
        """The answer as OpenAI's Responses API streams it."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

        def event(data):
            self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
            self.wfile.flush()

        rid = f"resp_{n}"
        event({"type": "response.created", "response": {"id": rid, "status": "in_progress"}})
        output = []
        if answer.get("compaction"):
            item = {"type": "compaction", "id": f"cmp_{n}", "encrypted_content": f"compacted-{n}"}
            event({"type": "response.output_item.added", "output_index": 0, "item": item})
            output.append(item)
        for i, (name, arguments) in enumerate(answer.get("tool_calls", [])):
            output.append({"type": "function_call", "id": f"fc_{n}_{i + 1}", "call_id": f"{self.server.call_prefix}_{n}_{i + 1}",
                           "name": name, "arguments": arguments, "status": "completed"})
        text = answer.get("text")
        if text:
            for part in pieces(text):
                event({"type": "response.output_text.delta", "delta": part})
            output.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": text}]})
        event({"type": "response.completed", "response": {
            "id": rid, "status": "completed", "output": output,
            "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                      "total_tokens": usage["total_tokens"]}}})

    def send_json(self, value, status=200):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--models", choices=["ok", "slow", "never"], default="ok")
    parser.add_argument("--lifetime", type=float, default=120)
    parser.add_argument("--call-prefix", default="call")
    args = parser.parse_args()
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.script = list(script)
    server.count = 0
    server.log_path = args.log
    server.models = args.models
    server.call_prefix = args.call_prefix
    open(args.log, "w").close()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    # Until stdin closes (the test stopped us) or the lifetime is over.
    threading.Thread(target=lambda: (sys.stdin.read(), STOP.set()), daemon=True).start()
    STOP.wait(args.lifetime)
    STOP.set()
    server.shutdown()


if __name__ == "__main__":
    main()
