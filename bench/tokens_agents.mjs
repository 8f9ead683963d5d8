// bench/tokens_agents.mjs: tokens in the request bodies a real agent sent to the scripted
// model (tests/terminal/run.py CASE --keep leaves them in requests-<port>.json), counted with
// @anthropic-ai/tokenizer and o200k_base. Per recording: the model requests, the tokens of
// every body as sent (its JSON text), and of the todo tool's definition in them (the tool
// object the agent built from the MCP server's description and schema), and of the agent's
// own list tools when it offers them (Claude tokenizer). Then, when any body carries them, the
// texts put in without a call (REINJECTED): Claude Code's "haven't been used recently"
// reminders, and the list and the end-of-turn reminder rpiv_todo's hooks put back. Asserts
// nothing.
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
// other request writes all of its tokens. Also, per request, how many of its turns come from
// the cache (-1: none, nor its prefix).
function cached(requests, counts) {
  const parts = requests.map((r) => split(r.body));
  let cost = 0;
  const read = [];
  for (let i = 0; i < requests.length; i++) {
    let best = 0;
    read.push(-1);
    for (let j = 0; j < i; j++) {
      const a = parts[j];
      const b = parts[i];
      if (a.rest !== b.rest || a.turns.length > b.turns.length) continue;
      if (a.turns.every((t, k) => t === b.turns[k]) && counts[j] > best) {
        best = Math.min(counts[j], counts[i]);
        read[i] = a.turns.length;
      }
    }
    cost += 0.1 * best + 1.25 * (counts[i] - best);
  }
  return { cost: Math.round(cost), read };
}

// The texts an agent or our hooks put in without a call: where each begins, and where it
// ends: the end of its string, or the first of `ends` after `skip` (Claude Code joins the
// texts it adds between two turns with a blank line).
const REINJECTED = [
  // Claude Code's reminders to use its own list (its task tools or TodoWrite), with the
  // list they carry ("Here are the existing tasks:", a blank line, a line per task).
  {
    kind: "Claude Code's reminder",
    start: /The (task tools haven't|TodoWrite tool hasn't) been used recently/,
    skip: /Here are the existing [^\n]*\n\n/,
    ends: ["\n\n", "</system-reminder>"],
  },
  // Our hooks: the open list (after a resume, a /clear or a compaction; a note of the
  // user's changes on its last line) and the end-of-turn reminder (one line).
  { kind: "our list", start: /The todo list as it stands/, ends: ["\n\n", "</system-reminder>"] },
  { kind: "our reminder", start: /Reminder from the todo tool: /, ends: ["\n"] },
];

// Every string in a value.
function strings(v, out = []) {
  if (typeof v === "string") out.push(v);
  else if (v && typeof v === "object") for (const x of Array.isArray(v) ? v : Object.values(v)) strings(x, out);
  return out;
}

// The re-injected texts of `kind` in a body, each as the model reads it.
function copies(body, { start, skip, ends }) {
  const out = [];
  for (const s of strings(body)) {
    const re = new RegExp(start.source, "g");
    let m;
    while ((m = re.exec(s))) {
      let from = m.index + m[0].length;
      const skipped = skip && skip.exec(s.slice(from));
      if (skipped) from += skipped.index + skipped[0].length;
      const stops = ends.map((e) => s.indexOf(e, from)).filter((i) => i >= 0);
      out.push(s.slice(m.index, stops.length ? Math.min(...stops) : s.length).trimEnd());
    }
  }
  return out;
}

// Per kind over a recording: the copies put in (those a body carries and the body before it
// did not), the tokens of a copy (the mean), every body's copies as sent, and with caching
// estimated as above (a copy new in a body written at 1.25x, one the body before carried
// read at 0.1x).
function reinjected(requests) {
  const out = [];
  for (const kind of REINJECTED) {
    let before = [];
    let added = 0;
    let addedTokens = 0;
    let sent = 0;
    let cost = 0;
    for (const r of requests) {
      const now = copies(r.body, kind);
      const left = [...before];
      for (const text of now) {
        const n = claude.countTokens(text);
        sent += n;
        const k = left.indexOf(text);
        if (k >= 0) {
          left.splice(k, 1);
          cost += 0.1 * n;
        } else {
          added++;
          addedTokens += n;
          cost += 1.25 * n;
        }
      }
      before = now;
    }
    if (added) out.push([kind.kind, added, Math.round(addedTokens / added), sent, Math.round(cost)]);
  }
  return out;
}

// The list's part of a body, as issue 39 counts what a list costs: what is there because of
// the list, whatever else the agent sends. Its pieces:
//   - "tools": the list tools' definitions (the todo tool, or the agent's own, OWN) wherever the
//     body declares them, Codex's tool_search call and its answer when it loads the todo tool;
//   - "instructions": the server's snippet where the agent puts it (the system prompt, a
//     developer message);
//   - "calls": the list tools' calls and their results as the history carries them
//     (Anthropic tool_use / tool_result, Responses function_call / function_call_output,
//     Gemini functionCall / functionResponse);
//   - "re-injected": REINJECTED's texts.
// Each piece's JSON text (a text's own characters) counted with the Claude tokenizer and o200k.
const LIST = (name) => typeof name === "string" && (TODO.test(name) || OWN.test(name));
// The server's snippet: its wording until b8922b6, and since 53fe4d1.
const SNIPPET = /todo: (?:plan multi-step work|a task list for multi-step work)[^\n"]*?recreate tasks/g;

function pieces(v, ids, out, depth = 0) {
  if (typeof v === "string") {
    for (const m of v.matchAll(SNIPPET)) out.push(["instructions", m[0]]);
    for (const kind of REINJECTED) for (const text of copies(v, kind)) out.push(["re-injected", text]);
    return out;
  }
  if (!v || typeof v !== "object" || depth > 16) return out;
  if (!Array.isArray(v)) {
    if (LIST(v.name) && typeof v.description === "string") return out.push(["tools", JSON.stringify(v)]), out;
    if (/^tool_search_(call|output)$/.test(v.type) && ids.search.has(v.call_id)) return out.push(["tools", JSON.stringify(v)]), out;
    const call = v.functionCall || v.functionResponse;
    if ((v.type === "tool_use" || v.type === "function_call") && LIST(v.name)) return out.push(["calls", JSON.stringify(v)]), out;
    if (call && LIST(call.name)) return out.push(["calls", JSON.stringify(v)]), out;
    if (v.type === "tool_result" && ids.calls.has(v.tool_use_id)) return out.push(["calls", JSON.stringify(v)]), out;
    if (v.type === "function_call_output" && ids.calls.has(v.call_id)) return out.push(["calls", JSON.stringify(v)]), out;
  }
  for (const x of Array.isArray(v) ? v : Object.values(v)) pieces(x, ids, out, depth + 1);
  return out;
}

// The ids of a body's list calls, and of the tool searches whose answer holds a list tool.
function listIds(v, ids = { calls: new Set(), search: new Set() }, depth = 0) {
  if (!v || typeof v !== "object" || depth > 16) return ids;
  if (!Array.isArray(v)) {
    if ((v.type === "tool_use" || v.type === "function_call") && LIST(v.name)) ids.calls.add(v.id ?? v.call_id).add(v.call_id);
    if (v.type === "tool_search_output" && declared(v.tools, TODO).length) ids.search.add(v.call_id);
  }
  for (const x of Array.isArray(v) ? v : Object.values(v)) listIds(x, ids, depth + 1);
  return ids;
}

// Per recording: the list's part as sent, by kind and in all, and with caching estimated as
// the bodies are (a piece in the prefix or in a turn the request reads from the cache at
// 0.1x, any other written at 1.25x); with the Claude tokenizer, then the as sent and cached
// figures with o200k (the one Codex's OpenAI models read). Each body's pieces are found once.
function listPart(requests, read) {
  const KINDS = ["tools", "instructions", "calls", "re-injected"];
  const sent = Object.fromEntries(KINDS.map((k) => [k, 0]));
  let cost = 0;
  let sentO = 0;
  let costO = 0;
  requests.forEach((r, i) => {
    const ids = listIds(r.body);
    const key = TURNS.find((k) => Array.isArray(r.body[k]));
    const turns = key ? r.body[key] : [];
    const found = [[-1, pieces(PREFIX.map((k) => r.body[k]), ids, [])]];
    turns.forEach((t, k) => found.push([k, pieces(t, ids, [])]));
    for (const [k, list] of found) {
      const rate = (k < 0 ? read[i] >= 0 : k < read[i]) ? 0.1 : 1.25;
      for (const [kind, text] of list) {
        const n = claude.countTokens(text);
        const o = o200k.encode(text).length;
        sent[kind] += n;
        cost += rate * n;
        sentO += o;
        costO += rate * o;
      }
    }
  });
  const all = KINDS.reduce((a, k) => a + sent[k], 0);
  return [...KINDS.map((k) => sent[k]), all, Math.round(cost), sentO, Math.round(costO)];
}

const rows = [];
const again = [];
const lists = [];
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
  const cost = cached(requests, counts);
  lists.push([label, requests.length, ...listPart(requests, cost.read)]);
  rows.push([
    label,
    requests.length,
    withTool,
    bodyC,
    bodyO,
    cost.cost,
    toolC,
    toolO,
    withTool ? Math.round(toolC / withTool) : 0,
    requests.length ? Math.round(own / requests.length) : 0,
  ]);
  for (const r of reinjected(requests)) again.push([label, ...r, ((100 * r[3]) / bodyC).toFixed(1) + "%"]);
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
// A Markdown table, the first two columns left-aligned when `text` says so.
function table(head, rows, text = 1) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (r) => "| " + r.map((c, i) => (i >= text ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join(" | ") + " |";
  console.log(line(head));
  console.log("| " + widths.map((w, i) => (i >= text ? "-".repeat(w - 1) + ":" : "-".repeat(w))).join(" | ") + " |");
  for (const r of rows) console.log(line(r));
}
table(head, rows);
console.log();
table(["recording", "requests", "list tools", "instructions", "calls and results", "re-injected", "the list's part, as sent", "cached (est.)", "as sent (o200k)", "cached (o200k, est.)"], lists);
if (again.length) {
  console.log();
  const reHead = ["recording", "re-injected", "copies put in", "tokens a copy", "as sent (claude)", "cached (est.)", "of the bodies"];
  table(reHead, again, 2);
}
