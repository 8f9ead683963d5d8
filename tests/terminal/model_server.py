"""tests/terminal/model_server.py: a scripted model on 127.0.0.1 for the terminal agents.

One HTTP server speaks the four APIs the agents use, each streaming the way the real
service does:

  POST /v1/messages                                   Anthropic Messages (SSE or JSON)
  POST /v1/responses                                  OpenAI Responses (SSE)
  POST /v1/chat/completions                           OpenAI Chat Completions (SSE or JSON)
  POST /v1beta/models/M:streamGenerateContent         Gemini (SSE with alt=sse, else a
  POST /v1beta/models/M:generateContent               JSON array / one JSON object)

The model is stateless: it reads the conversation in each request, counts the results of
its own tool (the offered tool whose name ends in `todo`, e.g. mcp__rpiv_todo__todo) and
answers with the next scripted call, one call per turn, then with a closing text. A
request that does not offer the tool (an agent's side request: a title, a summary, a
next-speaker check) gets a short text. Every request is recorded, whatever it was.

The parsing helpers (`offered_tools`, `todo_exchanges`) are also what the test reads the
recorded bodies with.
"""

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

# The name of the MCP server's tool as an agent offers it: `todo`, or prefixed with the
# server's name (mcp__rpiv_todo__todo, mcp_rpiv_todo_todo).
TODO_NAME = re.compile(r"(^|[-_.:])todo$")

FINAL_TEXT = "The list is up to date."
SIDE_TEXT = "OK"


def api_of(path):
    """Which API a request path belongs to: anthropic, openai, chat, gemini or None."""
    path = urlsplit(path).path
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "openai"
    if path.endswith("/chat/completions"):
        return "chat"
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    return None


# ---------------------------------------------------------------------------------------
# Reading a request body
# ---------------------------------------------------------------------------------------


def offered_tools(api, body):
    """The tools a request offers: a list of (name, JSON Schema of the arguments)."""
    tools = []
    if api == "anthropic":
        for tool in body.get("tools") or []:
            if "name" in tool:
                tools.append((tool["name"], tool.get("input_schema")))
    elif api == "openai":

        # A tool inside a namespace (Codex puts an MCP server's tools in one) is named
        # `namespace.name`.
        def walk(items, prefix):
            for tool in items or []:
                kind = tool.get("type")
                if kind == "namespace":
                    walk(tool.get("tools"), prefix + tool.get("name", "") + ".")
                elif "name" in tool:
                    tools.append((prefix + tool["name"], tool.get("parameters")))
                elif kind:
                    tools.append((kind, None))

        walk(body.get("tools"), "")
        # Tools Codex loaded through tool_search: they are offered from the search's output.
        for item in body.get("input") or []:
            if item.get("type") in ("tool_search_output", "additional_tools"):
                walk(item.get("tools"), "")
    elif api == "chat":
        for tool in body.get("tools") or []:
            function = tool.get("function") or {}
            if "name" in function:
                tools.append((function["name"], function.get("parameters")))
    elif api == "gemini":
        for group in body.get("tools") or []:
            for decl in group.get("functionDeclarations") or []:
                schema = decl.get("parametersJsonSchema", decl.get("parameters"))
                tools.append((decl["name"], schema))
    return tools


def todo_tool(api, body):
    """(name, schema) of the offered todo tool, or None."""
    for name, schema in offered_tools(api, body):
        if TODO_NAME.search(name):
            return name, schema
    return None


def _anthropic_text(content):
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def _openai_text(output):
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return output.get("content") if isinstance(output.get("content"), str) else json.dumps(output)
    return "".join(p.get("text", "") for p in output or [] if isinstance(p, dict))


def _arguments(text):
    """A call's arguments as the OpenAI APIs send them (JSON text): the value, or the text
    itself when it is not JSON."""
    try:
        return json.loads(text or "null")
    except ValueError:
        return text


def todo_exchanges(api, body, name):
    """The todo calls in a request's conversation, in order: a list of dicts with the
    call's `args` and its `result` (the text the model is shown, None while unanswered),
    `raw` (the result as sent) and `is_error` (when the API carries it)."""
    calls = {}
    order = []
    if api == "anthropic":
        for message in body.get("messages") or []:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_use" and block.get("name") == name:
                    calls[block["id"]] = {"args": block.get("input"), "result": None}
                    order.append(block["id"])
                elif block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                    call = calls[block["tool_use_id"]]
                    call["raw"] = block.get("content")
                    call["result"] = _anthropic_text(block.get("content"))
                    call["is_error"] = block.get("is_error", False)
    elif api == "openai":
        for item in body.get("input") or []:
            kind = item.get("type")
            full = item.get("name", "")
            if item.get("namespace"):
                full = item["namespace"] + "." + full
            if kind == "function_call" and full == name:
                calls[item["call_id"]] = {"args": _arguments(item.get("arguments")), "result": None}
                order.append(item["call_id"])
            elif kind == "function_call_output" and item.get("call_id") in calls:
                call = calls[item["call_id"]]
                call["raw"] = item.get("output")
                call["result"] = _openai_text(item.get("output"))
    elif api == "chat":
        for message in body.get("messages") or []:
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                if function.get("name") == name:
                    calls[call["id"]] = {"args": _arguments(function.get("arguments")), "result": None}
                    order.append(call["id"])
            if message.get("role") == "tool" and message.get("tool_call_id") in calls:
                call = calls[message["tool_call_id"]]
                call["raw"] = message.get("content")
                call["result"] = _openai_text(message.get("content"))
    elif api == "gemini":
        pending = []
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                if "functionCall" in part and part["functionCall"].get("name") == name:
                    key = part["functionCall"].get("id") or f"#{len(order)}"
                    calls[key] = {"args": part["functionCall"].get("args"), "result": None}
                    order.append(key)
                    pending.append(key)
                elif "functionResponse" in part and part["functionResponse"].get("name") == name:
                    key = part["functionResponse"].get("id")
                    if key not in calls:
                        key = pending[0] if pending else None
                    if key is None:
                        continue
                    if key in pending:
                        pending.remove(key)
                    response = part["functionResponse"].get("response")
                    calls[key]["raw"] = response
                    calls[key]["result"] = _gemini_text(response)
    return [calls[k] for k in order]


def _gemini_text(response):
    """The text in a functionResponse's response: Gemini CLI sends {"output": text} or
    {"content": [{"text": ...}]}, depending on the tool."""
    if isinstance(response, dict):
        if isinstance(response.get("output"), str):
            return response["output"]
        if isinstance(response.get("content"), list):
            return "".join(p.get("text", "") for p in response["content"] if isinstance(p, dict))
        if isinstance(response.get("error"), str):
            return response["error"]
    return json.dumps(response)


# Claude Code's tool for MCP servers still connecting: `claude -p` does not wait for them
# before its first request, and tells the model to call this one instead.
WAIT_TOOL = "WaitForMcpServers"


def _may_wait(body):
    """True while Claude Code offers WaitForMcpServers and the model called it fewer than
    five times."""
    offered = any(name == WAIT_TOOL for name, _ in offered_tools("anthropic", body))
    return offered and len(todo_exchanges("anthropic", body, WAIT_TOOL)) < 5


def _needs_tool_search(body):
    """Codex offers MCP tools to some models only through its tool_search: true while the
    request offers tool_search and no search was made yet."""
    offered = any(t.get("type") == "tool_search" for t in body.get("tools") or [])
    searched = any(i.get("type") == "tool_search_call" for i in body.get("input") or [])
    return offered and not searched


# ---------------------------------------------------------------------------------------
# Answers
# ---------------------------------------------------------------------------------------


def _sse(event, data):
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


class Lockstep:
    """Models that take turns: a model about to make its call k waits (up to 10 s) until
    every other model has had k of its calls answered or has finished, so the agents'
    calls interleave."""

    def __init__(self):
        self.cond = threading.Condition()
        self.answered = {}

    def wait(self, name, k):
        with self.cond:
            self.answered[name] = k
            self.cond.notify_all()
            self.cond.wait_for(lambda: all(n == name or a >= k for n, a in self.answered.items()), timeout=10)

    def finish(self, name):
        with self.cond:
            self.answered[name] = float("inf")
            self.cond.notify_all()


class ScriptedModel:
    """The scripted model: `calls` is a list of todo arguments, one per turn. With a
    Lockstep, it takes turns with the other models on it, as `name`."""

    def __init__(self, calls, final_text=FINAL_TEXT, lockstep=None, name=None, big_first=0):
        self.calls = list(calls)
        # The input tokens the first answer reports (0: the usual 100), so that an agent
        # with a low auto-compaction limit compacts once.
        self.big_first = big_first
        self.final_text = final_text
        self.lockstep = lockstep
        self.name = name
        if lockstep:
            lockstep.wait(name, 0)
        self.lock = threading.Lock()
        self.requests = []
        self.counter = 0

    def record(self, method, path, headers, body):
        with self.lock:
            self.requests.append({"method": method, "path": path, "headers": headers, "body": body})

    def next_id(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def prompt_tokens(self, n, call):
        """The input tokens answer `n` reports (`call`: the tool it calls, or None):
        `big_first` for the first answer when set, else 100."""
        return self.big_first if n == 1 and self.big_first else 100

    def decide(self, api, body):
        """(tool name, arguments) of the next call, or (None, text)."""
        tool = todo_tool(api, body) if isinstance(body, dict) else None
        if tool is None and api == "openai" and _needs_tool_search(body):
            return "tool_search", {"query": "todo task list", "limit": 8}
        if tool is None and api == "anthropic" and _may_wait(body):
            return WAIT_TOOL, {"servers": ["rpiv_todo"]}
        if tool is None:
            return None, SIDE_TEXT
        done = todo_exchanges(api, body, tool[0])
        if len(done) < len(self.calls):
            if self.lockstep:
                self.lockstep.wait(self.name, len(done))
            return tool[0], self.calls[len(done)]
        if self.lockstep:
            self.lockstep.finish(self.name)
        return None, self.final_text


class Handler(BaseHTTPRequestHandler):
    server_version = "scripted-model/1"

    def log_message(self, *args):
        pass

    @property
    def model(self):
        return self.server.model

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = self._read_chunked()
        encoding = self.headers.get("Content-Encoding", "")
        if encoding == "gzip":
            import gzip

            raw = gzip.decompress(raw)
        elif encoding == "zstd":
            return {"undecoded": "zstd", "size": len(raw)}
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return {"unparsed": raw.decode("utf-8", "replace")}

    def _read_chunked(self):
        out = b""
        while True:
            size = int(self.rfile.readline().strip().split(b";")[0], 16)
            if size == 0:
                self.rfile.readline()
                return out
            out += self.rfile.read(size)
            self.rfile.readline()

    def _headers(self):
        keep = {}
        for key, value in self.headers.items():
            low = key.lower()
            if low in ("authorization", "x-api-key", "x-goog-api-key"):
                value = "(set)"
            keep[low] = value
        return keep

    def _json(self, status, data):
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _stream(self, chunks):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(chunk)
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        self.model.record("GET", self.path, self._headers(), None)
        path = urlsplit(self.path).path
        if path.endswith("/models"):
            self._json(200, {"object": "list", "data": [], "models": []})
        else:
            self._json(404, {"error": {"message": f"no such path: {path}"}})

    def do_HEAD(self):
        self.model.record("HEAD", self.path, self._headers(), None)
        self.send_response(200)
        self.end_headers()

    def do_POST(self):
        body = self._body()
        self.model.record("POST", self.path, self._headers(), body)
        path = urlsplit(self.path).path
        api = api_of(self.path)
        if path.endswith("/count_tokens"):
            return self._json(200, {"input_tokens": 100})
        if path.endswith(":countTokens"):
            return self._json(200, {"totalTokens": 100})
        if api is None or not isinstance(body, dict):
            return self._json(404, {"error": {"message": f"no such path: {path}"}})
        name, what = self.model.decide(api, body)
        getattr(self, "_answer_" + api)(body, name, what)

    # Anthropic Messages ----------------------------------------------------------------

    def _answer_anthropic(self, body, name, what):
        n = self.model.next_id()
        model = body.get("model", "claude")
        if name:
            block = {"type": "tool_use", "id": f"toolu_{n:04d}", "name": name, "input": what}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": what}
            stop = "end_turn"
        usage = {"input_tokens": 100, "output_tokens": 10}
        message = {
            "id": f"msg_{n:04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            message.update(content=[block], stop_reason=stop)
            return self._json(200, message)
        events = [_sse("message_start", {"type": "message_start", "message": dict(message, content=[])})]
        if name:
            start = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(what)}
        else:
            start = dict(block, text="")
            delta = {"type": "text_delta", "text": what}
        events.append(_sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}))
        events.append(_sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}))
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        events.append(
            _sse(
                "message_delta",
                {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": usage},
            )
        )
        events.append(_sse("message_stop", {"type": "message_stop"}))
        self._stream(events)

    # OpenAI Responses ------------------------------------------------------------------

    def _answer_openai(self, body, name, what):
        n = self.model.next_id()
        rid = f"resp_{n:04d}"
        if name == "tool_search":
            item = {
                "type": "tool_search_call",
                "id": f"ts_{n:04d}",
                "call_id": f"call_{n:04d}",
                "execution": "client",
                "status": "completed",
                "arguments": what,
            }
        elif name:
            item = {
                "type": "function_call",
                "id": f"fc_{n:04d}",
                "call_id": f"call_{n:04d}",
                "name": name,
                "arguments": json.dumps(what),
                "status": "completed",
            }
            # A tool offered inside a namespace is called with the namespace beside its name.
            if "." in name:
                namespace, short = name.rsplit(".", 1)
                item.update(name=short, namespace=namespace)
        else:
            item = {
                "type": "message",
                "id": f"msg_{n:04d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": what, "annotations": []}],
            }
        tokens = self.model.prompt_tokens(n, name)
        usage = {
            "input_tokens": tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": tokens + 10,
        }
        response = {"id": rid, "object": "response", "status": "in_progress", "model": body.get("model"), "output": []}
        events = [
            _sse("response.created", {"type": "response.created", "sequence_number": 0, "response": response}),
            _sse(
                "response.output_item.added",
                {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
            ),
        ]
        if not name:
            events.append(
                _sse(
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "sequence_number": 2,
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "delta": what,
                    },
                )
            )
        events.append(
            _sse(
                "response.output_item.done",
                {"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": item},
            )
        )
        done = dict(response, status="completed", output=[item], usage=usage)
        completed = {"type": "response.completed", "sequence_number": 4, "response": done}
        events.append(_sse("response.completed", completed))
        self._stream(events)

    # OpenAI Chat Completions -----------------------------------------------------------

    def _answer_chat(self, body, name, what):
        n = self.model.next_id()
        cid = f"chatcmpl_{n:04d}"
        model = body.get("model", "scripted")
        if name:
            call = {"index": 0, "id": f"call_{n:04d}", "type": "function"}
            call["function"] = {"name": name, "arguments": json.dumps(what)}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": what}
            finish = "stop"
        tokens = self.model.prompt_tokens(n, name)
        usage = {"prompt_tokens": tokens, "completion_tokens": 10, "total_tokens": tokens + 10}
        head = {"id": cid, "created": 1_800_000_000, "model": model}
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            return self._json(200, dict(head, object="chat.completion", choices=[choice], usage=usage))

        def chunk(delta, finish_reason=None, **extra):
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
            return _sse(None, dict(head, object="chat.completion.chunk", choices=[choice], **extra))

        events = [chunk(dict(message, content="" if name else what))]
        events.append(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(_sse(None, dict(head, object="chat.completion.chunk", choices=[], usage=usage)))
        events.append(b"data: [DONE]\n\n")
        self._stream(events)

    # Gemini ----------------------------------------------------------------------------

    def _answer_gemini(self, body, name, what):
        n = self.model.next_id()
        tokens = self.model.prompt_tokens(n, name)
        config = body.get("generationConfig") or {}
        if name:
            part = {"functionCall": {"name": name, "args": what, "id": f"fc_{n:04d}"}}
        elif config.get("responseMimeType") == "application/json":
            # A structured side request (Gemini CLI's next-speaker check): the user speaks.
            part = {"text": json.dumps({"reasoning": "The model has finished.", "next_speaker": "user"})}
        else:
            part = {"text": what}
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": tokens, "candidatesTokenCount": 10, "totalTokenCount": tokens + 10},
            "modelVersion": "scripted",
        }
        if ":streamGenerateContent" not in self.path:
            return self._json(200, chunk)
        if "alt=sse" in self.path:
            return self._stream([_sse(None, chunk)])
        self._json(200, [chunk])


class ModelServer:
    """The HTTP server on 127.0.0.1 (a free port), serving in a thread until `close`."""

    def __init__(self, model):
        self.model = model
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.model = model
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
