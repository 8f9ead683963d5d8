// bench/tokens_agents.mjs: tokens in the request bodies a real agent sent to the scripted
// model (tests/terminal/run.py CASE --keep leaves them in requests-<port>.json), counted with
// @anthropic-ai/tokenizer and o200k_base. Per recording: the model requests, the tokens of
// every body as sent (its JSON text), and of the todo tool's definition in them (the tool
// object the agent built from the MCP server's description and schema), and of the agent's
// own list tools when it offers them (Claude tokenizer). Asserts nothing.
//
//   node bench/tokens_agents.mjs <npm dir> LABEL=requests.json [LABEL=requests.json ...]

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [npmDir, ...recordings] = process.argv.slice(2);
const req = createRequire(path.join(path.resolve(npmDir), "node_modules") + "/");
const claude = req("@anthropic-ai/tokenizer");
const o200k = req("gpt-tokenizer/encoding/o200k_base");
const TODO = /(^|[-_.:])todo$/;
// The agents' own list tools: Claude Code's TodoWrite or Task tools, Codex's update_plan,
// Gemini CLI's write_todos, Qwen Code's todo_write, opencode's todowrite.
const OWN = /^(TodoWrite|TaskCreate|TaskGet|TaskList|TaskUpdate|update_plan|write_todos|todo_write|todowrite)$/;

// Every object in a body that declares a tool named by `re` (has a description).
function declared(v, re, out = [], depth = 0) {
  if (!v || typeof v !== "object" || depth > 12) return out;
  if (!Array.isArray(v) && typeof v.name === "string" && re.test(v.name) && typeof v.description === "string") {
    out.push(v);
    return out;
  }
  for (const x of Array.isArray(v) ? v : Object.values(v)) declared(x, re, out, depth + 1);
  return out;
}

// The todo tool's object in a body, wherever the agent put it: Anthropic `tools[]`, OpenAI
// Responses `tools[]` (inside a namespace), Chat Completions `tools[].function` or, for tools Codex loads through tool_search, an
// `input[]` item that carries them, Gemini `tools[].functionDeclarations[]`. The first
// object named like the tool that carries a description.
function todoTool(v, depth = 0) {
  if (!v || typeof v !== "object" || depth > 12) return null;
  if (!Array.isArray(v) && typeof v.name === "string" && TODO.test(v.name) && typeof v.description === "string") return v;
  for (const x of Array.isArray(v) ? v : Object.values(v)) {
    const hit = todoTool(x, depth + 1);
    if (hit) return hit;
  }
  return null;
}

// The conversation of a body, and the rest of it: Anthropic and Chat Completions
// `messages`, OpenAI Responses `input`, Gemini `contents`.
const TURNS = ["messages", "input", "contents"];

// A value with the cache breakpoints an agent moves from request to request taken out.
function plain(v) {
  return JSON.stringify(v, (k, x) => (k === "cache_control" ? undefined : x));
}

// What a body sends before its turns, which a cached prefix must share: the model, the
// system prompt and the tools (not per-request metadata such as Codex's turn ids).
const PREFIX = ["model", "system", "instructions", "systemInstruction", "tools", "tool_choice", "toolConfig"];

// The body's turns and its prefix fields, each as JSON text.
function split(body) {
  const key = TURNS.find((k) => Array.isArray(body[k]));
  const rest = PREFIX.map((k) => body[k]);
  return { turns: key ? body[key].map(plain) : [], rest: plain(rest) };
}

// Tokens as sent with prompt caching estimated: a request whose body extends an earlier one
// (the same model, system and tools; that one's turns first) reads the earlier body's
// tokens from the cache at 0.1x and writes the rest at 1.25x (Anthropic's prices); any
// other request writes all of its tokens.
function cached(requests, counts) {
  const parts = requests.map((r) => split(r.body));
  let cost = 0;
  for (let i = 0; i < requests.length; i++) {
    let best = 0;
    for (let j = 0; j < i; j++) {
      const a = parts[j];
      const b = parts[i];
      if (a.rest !== b.rest || a.turns.length > b.turns.length) continue;
      if (a.turns.every((t, k) => t === b.turns[k])) best = Math.max(best, Math.min(counts[j], counts[i]));
    }
    cost += 0.1 * best + 1.25 * (counts[i] - best);
  }
  return Math.round(cost);
}

const rows = [];
for (const arg of recordings) {
  const [label, file] = arg.split("=");
  const requests = JSON.parse(fs.readFileSync(file, "utf8")).filter(
    (r) => r.body && typeof r.body === "object" && /messages|responses|generatecontent|chat\/completions/i.test(r.path)
  );
  let bodyC = 0;
  let bodyO = 0;
  let toolC = 0;
  let toolO = 0;
  let withTool = 0;
  let own = 0;
  const counts = [];
  for (const r of requests) {
    for (const t of declared(r.body, OWN)) own += claude.countTokens(JSON.stringify(t));
    const text = JSON.stringify(r.body);
    counts.push(claude.countTokens(text));
    bodyC += counts[counts.length - 1];
    bodyO += o200k.encode(text).length;
    const tool = todoTool(r.body);
    if (tool) {
      withTool++;
      const t = JSON.stringify(tool);
      toolC += claude.countTokens(t);
      toolO += o200k.encode(t).length;
    }
  }
  rows.push([
    label,
    requests.length,
    withTool,
    bodyC,
    bodyO,
    cached(requests, counts),
    toolC,
    toolO,
    withTool ? Math.round(toolC / withTool) : 0,
    requests.length ? Math.round(own / requests.length) : 0,
  ]);
}
const head = [
  "recording",
  "requests",
  "with todo",
  "bodies (claude)",
  "bodies (o200k)",
  "with caching (claude, est.)",
  "todo tool (claude)",
  "todo tool (o200k)",
  "todo tool per request",
  "own list tools per request",
];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
const line = (r) => "| " + r.map((c, i) => (i ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join(" | ") + " |";
console.log(line(head));
console.log("| " + widths.map((w, i) => (i ? "-".repeat(w - 1) + ":" : "-".repeat(w))).join(" | ") + " |");
for (const r of rows) console.log(line(r));
