// bench/tokens.mjs: the token bench's figures (scripts/bench.sh --tokens). Reads what
// bench/tokens.lua wrote for a base revision and for this tree, and what
// bench/tokens_builtin.mjs read out of the agents' packages; counts with two real
// tokenizers, offline: @anthropic-ai/tokenizer (Claude's, as published) and o200k_base
// (gpt-tokenizer). Prints tables; asserts nothing.
//
//   node bench/tokens.mjs <npm dir> <base label> <base.json> <this.json> [builtin.json]
//
// The session model (what an agent sends, counted offline, without the agent's own system
// prompt and messages, which every request carries too): a session of N tool calls is N + 1
// requests; each carries the tool's definition and the history so far (every earlier
// call's arguments and reply). As sent: (N + 1) x definition + sum over calls j of
// (N - j) x (arguments_j + reply_j), j from 0. With prompt caching, each piece is new once:
// definition + every call's arguments and reply; the rest is read from the cache
// (estimated cost in Anthropic's prices: a write 1.25x, a read 0.1x).

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [npmDir, baseLabel, baseFile, thisFile, builtinFile] = process.argv.slice(2);
const req = createRequire(path.join(path.resolve(npmDir), "node_modules") + "/");
const claude = req("@anthropic-ai/tokenizer");
const o200k = req("gpt-tokenizer/encoding/o200k_base");

const TOKENIZERS = [
  ["claude", (t) => claude.countTokens(t)],
  ["o200k", (t) => o200k.encode(t).length],
];

const read = (f) => JSON.parse(fs.readFileSync(f, "utf8"));
const base = read(baseFile);
const mine = read(thisFile);
const builtin = builtinFile && fs.existsSync(builtinFile) ? read(builtinFile) : { missing: {} };

function pad(s, n, right) {
  s = String(s);
  return right ? s.padStart(n) : s.padEnd(n);
}

function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (r) => "| " + r.map((c, i) => pad(c, widths[i], i > 0)).join(" | ") + " |";
  console.log(line(head));
  console.log("| " + widths.map((w, i) => (i > 0 ? "-".repeat(w - 1) + ":" : "-".repeat(w))).join(" | ") + " |");
  for (const r of rows) console.log(line(r));
  console.log("");
}

// A session as [{args, reply}], with the definition's parts.
function session(def, calls, count) {
  const d = count(def.description) + count(def.schema) + (def.instructions ? count(def.instructions) : 0);
  const n = calls.length;
  let args = 0;
  let replies = 0;
  let history = 0;
  calls.forEach((c, j) => {
    const a = count(c.args);
    const r = count(c.reply);
    args += a;
    replies += r;
    history += (n - j) * (a + r);
  });
  const sent = (n + 1) * d + history;
  const fresh = d + args + replies;
  return { d, n, args, replies, sent, fresh, cached: Math.round(1.25 * fresh + 0.1 * (sent - fresh)) };
}

// The scripted session (6 tasks, #3 waiting on #2 and #6 on #5, 12 status changes) with a
// whole-list tool: one call writing the six tasks, then one call per status change, each
// sending the whole list.
const SUBJECTS = [
  ["Read the config loader", "Reading the config loader"],
  ["Write the parser", "Writing the parser"],
  ["Test the parser", "Testing the parser"],
  ["Wire the parser into the loader", "Wiring the parser into the loader"],
  ["Update the docs", "Updating the docs"],
  ["Run the whole test suite", "Running the whole test suite"],
];

function wholeList(agent, tool) {
  const status = SUBJECTS.map(() => "pending");
  const calls = [];
  const write = () => {
    const items = SUBJECTS.map(([s, a], i) => {
      if (agent === "claude") return { content: s, status: status[i], activeForm: a };
      if (agent === "codex") return { step: s, status: status[i] };
      return { description: s, status: status[i] };
    });
    const args = JSON.stringify(agent === "codex" ? { plan: items } : { todos: items });
    const reply =
      agent === "gemini"
        ? tool.reply + "\n" + SUBJECTS.map(([s], i) => `${i + 1}. [${status[i]}] ${s}`).join("\n")
        : tool.reply;
    calls.push({ args, reply });
  };
  write();
  for (let i = 0; i < SUBJECTS.length; i++) {
    status[i] = "in_progress";
    write();
    status[i] = "completed";
    write();
  }
  return calls;
}

// The agents' own lists in bench/tokens_builtin.mjs's output, Claude Code's two TodoWrite
// prompts apart.
const AGENTS = ["claude", "claude_short", "codex", "gemini"];

console.log(`Token bench: ours at ${baseLabel} (before) and in this tree (after), and the agents' own lists.\n`);

for (const [name, count] of TOKENIZERS) {
  console.log(`### Tokenizer: ${name === "claude" ? "@anthropic-ai/tokenizer" : "o200k_base (gpt-tokenizer)"}\n`);
  const defRow = (label, def) => {
    const parts = [count(def.description), count(def.schema), def.instructions ? count(def.instructions) : 0];
    return [label, ...parts, parts[0] + parts[1] + parts[2]];
  };
  const defs = [defRow(`todo, ${baseLabel}`, base.definition), defRow("todo, this tree", mine.definition)];
  for (const agent of AGENTS) {
    const t = builtin[agent];
    if (t) defs.push(defRow(`${t.agent ?? agent}: ${t.tool} (${t.how})`, { description: t.description, schema: t.schema }));
  }
  console.log("The tool's definition, sent with every request (tokens):\n");
  table(["tool", "description", "schema", "instructions", "total"], defs);

  const rows = [];
  const add = (label, def, calls) => {
    const s = session(def, calls, count);
    rows.push([label, s.n, s.n + 1, s.args, s.replies, s.d, s.sent, s.fresh, s.cached]);
  };
  add(`todo, ${baseLabel}, ${base.sessions[0].name}`, base.definition, base.sessions[0].calls);
  for (const s of mine.sessions) add(`todo, this tree, ${s.name}`, mine.definition, s.calls);
  for (const agent of AGENTS) {
    const t = builtin[agent];
    if (t) add(`${t.agent ?? agent}: ${t.tool}, whole list`, { description: t.description, schema: t.schema }, wholeList(t.agent ?? agent, t));
  }
  console.log(
    "The scripted session (6 tasks, 2 waiting on another, 12 status changes; ours lists twice), tool-attributable tokens only:\n"
  );
  table(["session", "calls", "requests", "arguments", "replies", "definition", "as sent", "new (cached)", "cost, cached"], rows);

  const re = (label, r) => [label, count(r.compaction), count(r.reminder), count(r.change_note)];
  console.log("Re-injected without a call (tokens): the compact list after a compaction (adapters, terminal hooks), the end-of-turn reminder, the co-owned list's note:\n");
  table(["tree", "compaction", "reminder", "change note"], [re(baseLabel, base.reinjected), re("this tree", mine.reinjected)]);
}
for (const [agent, why] of Object.entries(builtin.missing || {})) console.log(`${agent}: left out (${why})`);
